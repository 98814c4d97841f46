/* Plugin for the unload test: allocates (and keeps) one block of 4242 bytes. */
#include <stdlib.h>

void *plugin_keep;

__attribute__((noinline)) void plugin_alloc(void) { plugin_keep = malloc(4242); }
