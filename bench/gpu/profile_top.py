"""The slowest kernels of one decode step from `VKC_VULKAN_PROFILE=1 vkc run` (stderr, a barrier after
each dispatch): of the profiled instances, the one that ran most (the decode step), each shader's
summed time, share and dispatch count.
    python3 profile_top.py PROFILE_FILE LABEL TOP [PREFIX]"""
import collections
import re
import sys


def main():
    path, label, top = sys.argv[1], sys.argv[2], int(sys.argv[3])
    prefix = sys.argv[4] if len(sys.argv) > 4 else "  "
    blocks, cur = [], None
    for line in open(path):
        if line.startswith("vulkan profile:"):
            cur = [line.strip(), collections.Counter(), collections.Counter()]
            blocks.append(cur)
        m = re.match(r"\s+([\d.]+) us\s+[\d.]+%\s+(\S+)", line)
        if m and cur:
            cur[1][m.group(2)] += float(m.group(1))
            cur[2][m.group(2)] += 1
    if not blocks:
        print(f"{prefix}{label}: no profile in {path}")
        return
    b = max(blocks, key=lambda b: int(re.search(r"mean of (\d+)", b[0]).group(1)))
    total = sum(b[1].values())
    print(f"{prefix}{label} one step, a barrier after each dispatch: {b[0][len('vulkan profile: '):]}")
    for op, us in b[1].most_common(top):
        print(f"{prefix}   {us:8.1f} us {100 * us / total:5.1f}%  {b[2][op]:4d}x {op}")


if __name__ == "__main__":
    main()
