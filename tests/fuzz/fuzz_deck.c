/* fuzz_deck.c - libFuzzer target: the deck parser (src/deck.c) on any text. Every input must end in
 * a parsed deck whose effective text parses again to the same text, or in an error message; never a
 * crash, a sanitizer report or a leak. Built with -DDPAMR_FUZZ=ON and clang (docs/testing.md). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/deck.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0'; /* a deck is text: what follows a NUL byte is not read (deck_load refuses it) */
    deck_t d, again;
    char err[2048];
    if (deck_parse_text(&d, "fuzz.inp", text, err, sizeof err) == 0) {
        if (deck_parse_text(&again, "again", d.text, err, sizeof err) != 0 || strcmp(d.text, again.text) != 0)
            abort(); /* the effective deck must read back as itself */
        deck_free(&again);
        deck_free(&d);
    } else if (!err[0]) {
        abort(); /* an error always has a message */
    }
    free(text);
    return 0;
}
