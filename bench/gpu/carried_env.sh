# Sourced by the bench/gpu scripts that run carried binaries on the GPU machine: BIN_DIR's lib/
# (the libraries ldd lists) on the loader's path, and the NVIDIA Vulkan driver's ICD when the
# machine has it and none was named. Usage: carried_env BIN_DIR
carried_env() {
  export LD_LIBRARY_PATH="$1/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  fi
}
