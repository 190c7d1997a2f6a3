#!/usr/bin/env bash
# Proves the README's fresh-machine commands on a machine that has nothing installed: builds a
# clean Debian bookworm root (mmdebstrap, minbase: apt and the essential packages only; debootstrap
# where mmdebstrap is missing), puts a clean clone of this repository's HEAD into it, and runs
# README command 1 (scripts/example.sh) and command 2 (scripts/test.sh) inside it under chroot,
# as a new user would. Then the packages: `--target package` builds the .deb, apt installs it into
# the root, and examples/consumer is built against it with find_package(vkc) and run. Prints the
# time of each step; exits non-zero if a step fails.
#
#   scripts/check-fresh-machine.sh [--only example|test|package] [--keep] [--dir DIR]
#
# Needs root, and Debian's (and npm's, for the tests' third-party models) registries. Not part of
# CI: it takes as long as a cold build and test run (about 25 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
only="" keep=0 dir=""
while (($#)); do
  case $1 in
    --only) only=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --dir) dir=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "check-fresh-machine: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ $(id -u) -eq 0 ]] || { echo "check-fresh-machine: needs root (chroot)" >&2; exit 2; }
[[ -z $only || $only == example || $only == test || $only == package ]] ||
  { echo "check-fresh-machine: --only example|test|package" >&2; exit 2; }

# The bootstrap tool is a host dependency of this check only, installed here if missing.
if ! command -v mmdebstrap >/dev/null && ! command -v debootstrap >/dev/null; then
  echo "check-fresh-machine: installing mmdebstrap on the host" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >&2
fi

root=${dir:-$(mktemp -d /var/tmp/vkc-fresh-XXXXXX)}
extra_ca=()
mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -R -l "${mounted[i]}" 2>/dev/null || true; done
  if ((keep)); then
    echo "check-fresh-machine: root kept at $root" >&2
  elif findmnt -rno TARGET | grep -q "^$root/"; then  # never delete through a mount of the host's /dev
    echo "check-fresh-machine: $root still has mounts; not removed" >&2
  else
    rm -rf --one-file-system "$root"
  fi
}
trap cleanup EXIT

step() {  # step NAME COMMAND...: runs and times one step
  local name=$1 start=$SECONDS
  shift
  echo "== $name" >&2
  if "$@"; then
    printf 'check-fresh-machine: %-28s ok      %4d s\n' "$name" $((SECONDS - start))
  else
    printf 'check-fresh-machine: %-28s FAILED  %4d s\n' "$name" $((SECONDS - start))
    exit 1
  fi
}

bootstrap() {
  if command -v mmdebstrap >/dev/null; then
    mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm "$root" http://deb.debian.org/debian
  else
    debootstrap --variant=minbase --include=ca-certificates bookworm "$root" http://deb.debian.org/debian
  fi
}

enter() {
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  # The network's, not the machine's: where this host trusts extra certificate authorities (a
  # TLS-intercepting proxy between it and npm's registry), the root trusts them too.
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    chroot "$root" /usr/sbin/update-ca-certificates >/dev/null 2>&1 || true
    extra_ca=(NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt)
  fi
  for m in proc sys dev; do
    mkdir -p "$root/$m"
    mount --rbind "/$m" "$root/$m" && mounted+=("$root/$m")
  done
  mkdir -p "$root/tmp" && chmod 1777 "$root/tmp"
  # HEAD as committed: a new user's clone, no build folder, no ignored files.
  git clone --quiet --no-hardlinks "$repo" "$root/root/vkc"
}

inside() {  # inside COMMAND: runs it in the clone, with a new user's environment
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 TERM=dumb "${extra_ca[@]}" /bin/bash -c "cd /root/vkc && $1"
}

total=$SECONDS
step "bootstrap bookworm (minbase)" bootstrap
step "clone into the root" enter
[[ -z $only || $only == example ]] && step "README 1: scripts/example.sh" inside scripts/example.sh
[[ -z $only || $only == test ]] && step "README 2: scripts/test.sh" inside scripts/test.sh
if [[ -z $only || $only == package ]]; then
  # The .deb from the build the README commands made (or a fresh one), installed with apt, and a
  # project outside the source tree built against the installed package.
  step "package: .deb built, apt installed" inside \
    'scripts/setup.sh && scripts/build.sh >/dev/null && cmake --build build --target package >/dev/null &&
     DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ./build/vkc_*.deb >/dev/null && command -v vkc'
  step "package: find_package(vkc) consumer" inside \
    'rm -rf /tmp/consumer && cp -r examples/consumer /tmp/consumer && mkdir -p /tmp/models &&
     cp examples/models/tiny_cnn.onnx /tmp/models/ && cmake -S /tmp/consumer -B /tmp/consumer/build -G Ninja >/dev/null &&
     cmake --build /tmp/consumer/build >/dev/null && /tmp/consumer/build/vkc_consumer && /tmp/consumer/build/vkc_runner /tmp/consumer/build/tiny_cnn.pte'
fi
printf 'check-fresh-machine: all steps passed in %d s\n' $((SECONDS - total))
