/* test_deck.c - deck parsing: defaults, values, overrides, and one clear error per bad input. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "src/deck.h"
#include "tests/test_util.h"

static const char *k_good =
    "# a comment\n"
    "dim = 3   # trailing comment\n"
    "root = 2 3 4\n"
    "tile_size = 16\n"
    "max_level = 5\n"
    "fields = rho e\n"
    "fill = model\n"
    "criterion = gradient\n"
    "criterion_field = e\n"
    "threshold = 2.5\n"
    "model.objects = a\n"
    "model.a.type = sphere\n"
    "model.a.center = 0.1 0.2 0.3\n"
    "model.a.radius = 0.25\n"
    "model.a.inside = 1 2\n"
    "variant = cpu\n"
    "pdl = off\n";

static void expect_error(const char *text, const char *needle)
{
    deck_t d;
    char err[1024] = "";
    const int rc = deck_parse_text(&d, "t.inp", text, err, sizeof err);
    CHECK(rc != 0, "accepted bad deck: %s", text);
    CHECK(strstr(err, needle) != NULL, "message '%s' lacks '%s'", err, needle);
    if (rc == 0) deck_free(&d);
}

int main(void)
{
    deck_t d;
    char err[1024] = "";
    CHECK(deck_parse_text(&d, "t.inp", "", err, sizeof err) == 0, "empty deck: %s", err);
    CHECK(d.p.dim == 2 && d.p.B == 8 && d.p.max_level == 4 && d.p.nf == 1 && d.variant == DP_VARIANT_AUTO &&
              d.pdl == 1 && d.p.fill == DP_FILL_PROLONG && d.root[0] == 4 && d.root[2] == 1,
          "defaults");
    CHECK(d.p.h0 == 1.0 / 32, "default cell_size %g", d.p.h0);
    deck_free(&d);

    CHECK(deck_parse_text(&d, "t.inp", k_good, err, sizeof err) == 0, "good deck: %s", err);
    CHECK(d.p.dim == 3 && d.root[0] == 2 && d.root[1] == 3 && d.root[2] == 4 && d.p.B == 16, "geometry");
    CHECK(d.p.nf == 2 && !strcmp(d.field_name[1], "e") && d.p.crit_field == 1, "fields");
    CHECK(d.p.fill == DP_FILL_MODEL && d.p.crit == DP_CRIT_GRADIENT && d.p.threshold == 2.5, "numerics");
    CHECK(d.p.nobj == 1 && d.p.obj[0].kind == DP_OBJ_ELLIPSOID && d.p.obj[0].radius[2] == 0.25 &&
              d.p.obj[0].inside[1] == 2.0 && d.p.obj[0].outside[0] == 0.0,
          "object");
    CHECK(d.variant == DP_VARIANT_CPU && d.pdl == 0, "variant/pdl");
    /* the effective deck re-parses to the same values */
    deck_t d2;
    CHECK(deck_parse_text(&d2, "again", d.text, err, sizeof err) == 0, "re-parse: %s", err);
    CHECK(memcmp(&d.p, &d2.p, sizeof d.p) == 0, "re-parsed parameters equal");
    deck_free(&d2);
    deck_free(&d);

    expect_error("tile_sise = 8\n", "t.inp:1: key 'tile_sise' = '8': unknown key; did you mean 'tile_size'?");
    expect_error("Max_Levl = 3\n", "unknown key; did you mean 'max_level'?");
    expect_error("model.a.radus = 1\n", "unknown key; did you mean 'model.a.radius'?");
    expect_error("xyz = 1\n", "key 'xyz' = '1': unknown key (valid keys: dim, ");
    {
        static const char *const w[] = { "run", "mesh", "check" };
        CHECK(deck_nearest("chek", w, 3) == 2 && deck_nearest("RUN", w, 3) == 0 && deck_nearest("xy", w, 3) == -1 &&
                  deck_nearest("", w, 3) == -1,
              "deck_nearest");
    }
    expect_error("dim = 2\ndim = 3\n", "t.inp:2: key 'dim' = '3': duplicate key (first set on line 1)");
    expect_error("tile_size = 12\n", "power of two");
    expect_error("tile_size = 64\n", "out of range");
    expect_error("max_level = x\n", "'x' is not an integer");
    expect_error("threshold = -1\n", "must be > 0");
    expect_error("threshold = nan\n", "not a finite number");
    expect_error("root = 1 2 3\n", "expected 2 values");
    expect_error("fill = cubic\n", "valid values are prolong, model");
    expect_error("variant = gpu\n", "valid values are auto, cpu, cdp, host");
    expect_error("hello\n", "t.inp:1: 'hello' is not 'key = value'");
    expect_error("dim =\n", "empty value");
    expect_error("model.objects = a\n", "object 'a' needs 'model.a.type'");
    expect_error("model.objects = a\nmodel.a.type = cube\n", "valid values are ellipsoid, box, gaussian, sphere");
    expect_error("model.objects = a\nmodel.a.type = box\nmodel.a.center = 0 0\nmodel.a.radius = 0\n", "radii");
    expect_error("model.b.type = box\n", "object 'b' is not in model.objects (not set)");
    expect_error("model.objects = a\nmodel.a.type = box\nmodel.a.center = 0 0\nmodel.a.radius = 1\nmodel.b.velocity = 1 1\n",
                 "object 'b' is not in model.objects (a)");
    expect_error("model.a.colour = red\n", "unknown key (valid keys: ");
    {   /* a stored deck of an earlier version may hold a hex number: read as it was (the user's deck and
           overrides refuse one: tests/errors.sh) */
        deck_t h;
        char herr[1024] = "";
        CHECK(deck_parse_text(&h, "t.inp", "threshold = 0x10\n", herr, sizeof herr) == 0 && h.p.threshold == 16.0,
              "a stored hex number: %s", herr);
        deck_free(&h);
    }
    {   /* a long bad token: cut, and the reason after it */
        char text[3100] = "threshold = ";
        memset(text + strlen(text), '1', 1500);
        strcat(text, "z\n");
        expect_error(text, "... (1501 characters)' is not a finite number");
    }
    expect_error("criterion_field = nope\n", "not one of the names in 'fields' (rho)");
    expect_error("fields = rho tracer e\ncriterion_field = nope\n", "not one of the names in 'fields' (rho tracer e)");
    expect_error("output = out.vtk\n", "must end in .hdf");
    expect_error("root = 65536 1\nmax_level = 20\n", "exceeds");
    expect_error("fields = a a\n", "named twice");
    expect_error("fields = a b c\nmodel.objects = o\nmodel.o.type = box\nmodel.o.center = 0 0\n"
                 "model.o.radius = 1\nmodel.o.inside = 1 2\n",
                 "key 'model.o.inside' = '1 2': expected 1 or 3 numbers");
    expect_error("dim = 3\nmodel.objects = o\nmodel.o.type = box\nmodel.o.center = 0 0 0\n"
                 "model.o.radius = 1 2\n",
                 "key 'model.o.radius' = '1 2': expected 1 or 3 numbers");
    expect_error("root = 64 64\ntile_size = 32\nmax_level = 20\n", "exceeds 67108863, the most 2D with tile_size 32");
    expect_error("fields = rho vtkGhostType\n", "'vtkGhostType' is reserved");
    expect_error("output = my out.hdf\n", "a value with spaces goes in double quotes");
    expect_error("output = \"my out.hdf\n", "t.inp:1: key 'output' = '\"my out.hdf': the opening double quote is not closed");
    expect_error("output = \"a\" b\n", "text after the closing double quote");
    expect_error("dim = 2\rdim = 3\r", "t.inp:2: key 'dim' = '3': duplicate key");

    /* time steps: defaults, values, and one error per bad key or combination */
    {
        const char *obj = "model.objects = o\nmodel.o.type = sphere\nmodel.o.center = 0.5 0.5\nmodel.o.radius = 0.2\n";
        char buf[1024];
        deck_t sa, sb;
        CHECK(deck_parse_text(&sa, "s", obj, err, sizeof err) == 0, "%s", err);
        CHECK(sa.steps == 0 && sa.regrid_every == 1 && sa.output_every == 1 && sa.p.obj[0].velocity[0] == 0.0 &&
                  sa.p.obj[0].velocity[2] == 0.0,
              "step defaults");
        deck_free(&sa);
        snprintf(buf, sizeof buf, "%smodel.o.velocity = 0.5 -0.25\nsteps = 12\ndt = 0.125\nregrid_every = 2\n"
                                  "output_every = 4\noutput = out/run_%%05d.hdf\n", obj);
        CHECK(deck_parse_text(&sa, "s", buf, err, sizeof err) == 0, "%s", err);
        CHECK(sa.steps == 12 && sa.dt == 0.125 && sa.regrid_every == 2 && sa.output_every == 4 &&
                  sa.p.obj[0].velocity[0] == 0.5 && sa.p.obj[0].velocity[1] == -0.25,
              "step values");
        CHECK(deck_parse_text(&sb, "again", sa.text, err, sizeof err) == 0 && !memcmp(&sa.p, &sb.p, sizeof sa.p) &&
                  sb.steps == 12 && sb.dt == 0.125,
              "step keys re-parse: %s", err);
        deck_free(&sa);
        deck_free(&sb);
        /* steps = 0 keeps a literal output name, '%' and all; a step pattern too (dpamr run refuses it:
           run_output_name, tests/errors.sh; dpamr mesh and bench do not write output) */
        CHECK(deck_parse_text(&sa, "s", "output = r_%05d.hdf\n", err, sizeof err) == 0, "steps = 0, a pattern: %s", err);
        deck_free(&sa);
        CHECK(deck_parse_text(&sa, "s", "output = 100%.hdf\n", err, sizeof err) == 0 && !strcmp(sa.output, "100%.hdf"),
              "steps = 0: output is a name: %s", err);
        deck_free(&sa);
        /* output's default: the deck's name with .hdf, _%05d.hdf with steps > 0, in the current directory */
        CHECK(deck_parse_text(&sa, "decks/my.run.inp", "", err, sizeof err) == 0 && !strcmp(sa.output, "my.run.hdf") &&
                  sa.output_default,
              "default output '%s': %s", sa.output, err);
        deck_free(&sa);
        snprintf(buf, sizeof buf, "%ssteps = 2\ndt = 1\n", obj);
        CHECK(deck_parse_text(&sa, "d/50%.inp", buf, err, sizeof err) == 0 && !strcmp(sa.output, "50__%05d.hdf"),
              "default pattern '%s': %s", sa.output, err);
        deck_free(&sa);
        struct {
            const char *keys, *needle;
        } bad[] = {
            { "steps = -1\n", "key 'steps' = '-1': -1 is out of range (0 to 1000000)" },
            { "steps = 2\noutput = r_%d.hdf\n", "key 'steps' = '2': steps > 0 needs dt" },
            { "steps = 2\ndt = 0\noutput = r_%d.hdf\n", "key 'dt' = '0': must be > 0" },
            { "steps = 2\ndt = inf\noutput = r_%d.hdf\n", "key 'dt' = 'inf': 'inf' is not a finite number" },
            { "regrid_every = 0\n", "key 'regrid_every' = '0': 0 is out of range (1 to 1000000)" },
            { "regrid_every = 3\noutput_every = 4\n", "key 'output_every' = '4': must be a multiple of regrid_every = 3" },
            { "steps = 2\ndt = 1\noutput = r.hdf\n", "key 'output' = 'r.hdf': no %d" },
            { "steps = 2\ndt = 1\noutput = r_%d_%d.hdf\n", "more than one %d" },
            { "steps = 2\ndt = 1\noutput = r_%s.hdf\n", "'%' at character 3 is not %d or %0Nd" },
            { "steps = 2\ndt = 1\noutput = r_%12d.hdf\n", "is not %d or %0Nd" },
            { "steps = 2\ndt = 1\noutput = r_%5d.hdf\n", "'%5d' at character 3 pads the step number with spaces (a file name with blanks): write %05d (zeros) or %d" },
            { "steps = 2\ndt = 1\noutput = d%d/r.hdf\n", "the %d must be in the file name, not in a folder" },
            { "model.o.velocity = 1\n", "key 'model.o.velocity' = '1': expected 2 numbers (one component per dimension)" },
            { "model.o.velocity = 1 nan\n", "'nan' is not a finite number" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
            snprintf(buf, sizeof buf, "%s%s", obj, bad[i].keys);
            expect_error(buf, bad[i].needle);
        }
        expect_error("steps = 2\ndt = 1\noutput = r_%d.hdf\n", "steps > 0 needs model.objects");
        size_t len = 0;
        char why[256];
        CHECK(deck_pattern_check("a/b_%03d.hdf", &len, why, sizeof why) == 4 && len == 4, "pattern offset");
    }

    /* line ends: LF, CRLF and CR alone give the same deck, line numbers counted alike */
    deck_t a, b, c;
    CHECK(deck_parse_text(&a, "lf", "dim = 3\nroot = 1 2 3 # c\n\noutput = x.hdf\n", err, sizeof err) == 0, "%s", err);
    CHECK(deck_parse_text(&b, "crlf", "dim = 3\r\nroot = 1 2 3 # c\r\n\r\noutput = x.hdf\r\n", err, sizeof err) == 0,
          "%s", err);
    CHECK(deck_parse_text(&c, "cr", "dim = 3\rroot = 1 2 3 # c\r\routput = x.hdf", err, sizeof err) == 0, "%s", err);
    CHECK(!strcmp(a.text, b.text) && !strcmp(a.text, c.text) && a.p.dim == 3 && c.root[2] == 3, "line ends");
    deck_free(&a), deck_free(&b), deck_free(&c);
    expect_error("dim = 3\r\n\r\nroot = 1\r\n", "t.inp:3: key 'root' = '1'");

    /* a quoted value keeps its spaces and '#', and the effective deck quotes it again */
    CHECK(deck_parse_text(&a, "q", "output = \"my out #1.hdf\" # comment\n", err, sizeof err) == 0, "%s", err);
    CHECK(!strcmp(a.output, "my out #1.hdf"), "quoted output '%s'", a.output);
    CHECK(strstr(a.text, "output = \"my out #1.hdf\"\n") != NULL, "rendered: %s", a.text);
    CHECK(deck_parse_text(&b, "again", a.text, err, sizeof err) == 0 && !strcmp(a.text, b.text), "re-parse: %s", err);
    deck_free(&a), deck_free(&b);

    /* many keys parse in linear time: 200000 unknown keys are refused at once, naming the first */
    {
        const int nk = 200000;
        char *big = malloc((size_t)nk * 24), *w = big;
        for (int i = 0; i < nk; ++i) w += sprintf(w, "key%d = %d\n", i, i);
        const clock_t t0 = clock();
        CHECK(deck_parse_text(&a, "big", big, err, sizeof err) != 0 && strstr(err, "big:1: key 'key0'"), "%s", err);
        const double s = (double)(clock() - t0) / CLOCKS_PER_SEC;
        CHECK(s < 2.0, "200000 keys took %.2f s", s);
        free(big);
    }
    return TEST_DONE();
}
