# Sourced by the bench/gpu scripts that run carried binaries on the GPU machine: BIN_DIR's lib/
# (the libraries ldd lists) on the loader's path, and the NVIDIA Vulkan driver's ICD when the
# machine has it and none was named. Usage: carried_env BIN_DIR
carried_env() {
  export LD_LIBRARY_PATH="$1/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  fi
}

# The common start of a bench script: carried_env BIN_DIR, then VKC (BIN_DIR's vkc) and WORK
# (${TMPDIR:-/tmp}/NAME, created, with SUBDIR inside it when given).
# Usage: carried_bench BIN_DIR NAME [SUBDIR]
carried_bench() {
  carried_env "$1"
  VKC="$1/vkc"
  WORK=${TMPDIR:-/tmp}/$2
  mkdir -p "$WORK${3:+/$3}"
}
