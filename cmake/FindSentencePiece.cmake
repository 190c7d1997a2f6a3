# FindSentencePiece: Google's SentencePiece (Debian: libsentencepiece-dev), for tokenizer.model
# files: the imported target SentencePiece::SentencePiece.
include(${CMAKE_CURRENT_LIST_DIR}/VkcFindLibrary.cmake)
vkc_find_library(SentencePiece SentencePiece::SentencePiece sentencepiece_processor.h sentencepiece)
