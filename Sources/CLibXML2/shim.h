#ifndef SITEGEN_CLIBXML2_SHIM_H
#define SITEGEN_CLIBXML2_SHIM_H
// Debian builds libxml2 with ICU, and its encoding.h then includes ICU's headers, which clash with the
// copy Foundation's module brings (_FoundationICU). Nothing here uses libxml2's ICU converters: the
// definition is dropped after xmlversion.h makes it (the structures that hold a converter are only
// reached through pointers libxml2 itself owns).
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/HTMLparser.h>
#include <libxml/tree.h>
#endif
