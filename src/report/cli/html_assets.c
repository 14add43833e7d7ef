/*
 * html_assets.c - the style sheet and script of `report --format html`,
 * embedded verbatim from src/report/cli/html/{style.css,flame.js} with the
 * assembler's .incbin, so they stay plain CSS and JavaScript files that
 * editors and linters understand. Each is NUL-terminated. The Makefile
 * makes this object depend on them (-MMD cannot see .incbin); the paths are
 * relative to the repository root, where make runs the compiler.
 */
#define LB_INCBIN(sym, file)                       \
    __asm__(".pushsection .rodata\n"               \
            ".global " #sym "\n"                   \
            ".type " #sym ", @object\n" #sym ":\n" \
            ".incbin \"" file "\"\n"               \
            ".byte 0\n"                            \
            ".size " #sym ", . - " #sym "\n"       \
            ".popsection\n")

LB_INCBIN(lb_html_css, "src/report/cli/html/style.css");
LB_INCBIN(lb_html_js, "src/report/cli/html/flame.js");
