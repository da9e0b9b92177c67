// The same ABI table as abi_check.c, compiled as C++: the headers must give
// identical layouts and values in both languages.
#include "abi_check.c"
