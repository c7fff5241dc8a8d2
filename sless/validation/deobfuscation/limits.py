"""The bounds of deobfuscation: what a hostile file can make it do."""

MAX_FOLD_BYTES = 1024 * 1024
#: a literal longer than this is not decoded (the blob rules report it instead)
MAX_LITERAL_CHARS = 256 * 1024
#: decompressed or decoded output kept per literal
MAX_DECODED_BYTES = 1024 * 1024
#: payloads (decoded code) kept per source file, all depths together
MAX_PAYLOADS = 16
#: payloads of payloads, and so on
MAX_DEPTH = 3
#: a folded value longer than this is not put back into the view
MAX_VALUE_CHARS = 20_000
#: nesting of expressions followed when folding
MAX_EXPR_DEPTH = 60

PY_SUFFIXES = (".py", ".pyw")
JS_SUFFIXES = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")
