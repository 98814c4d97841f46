/* heapprof-report: reads .hpf profiles written by the heapprof shim and prints them as text or
 * JSON. Everything happens in cli.c; this file exists so unit tests can link the rest. */
#include "hr_cli.h"

int main(int argc, char **argv)
{
    return hr_cli_run(argc, argv, stdout, stderr);
}
