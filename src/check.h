/* check.h - `dpamr check FILE`: re-validate a file written by dpamr (app layer). */
#ifndef DPAMR_CHECK_H
#define DPAMR_CHECK_H

/** Read the file, validate it with the deck stored in it while its cells are being read, compare
 *  every recorded value and /VTKHDF with the tiles, and print the report. Returns the exit status:
 *  0 (passed), 2 (a failed check: the file is not what dpamr wrote, or its mesh fails) or 1 (the
 *  file cannot be read). */
int check_file(const char *file);

#endif
