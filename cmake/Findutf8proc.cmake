# Findutf8proc: utf8proc (Debian: libutf8proc-dev), Unicode normalization (NFC/NFKC...) for the
# tokenizers' normalizers: the imported target utf8proc::utf8proc.
include(${CMAKE_CURRENT_LIST_DIR}/VkcFindLibrary.cmake)
vkc_find_library(utf8proc utf8proc::utf8proc utf8proc.h utf8proc)
