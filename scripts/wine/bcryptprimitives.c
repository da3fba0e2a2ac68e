/* A stand-in for Windows' bcryptprimitives.dll, for running dualperf.exe under Wine 8
 * (Debian 12), which lacks the DLL. Rust's standard library imports one function from
 * it, ProcessPrng, to seed HashMap keys and the like. This stub answers it from
 * RtlGenRandom (advapi32's SystemFunction036), which Wine provides. Test harness only:
 * it is never shipped with a release and real Windows (8.1 and later) has the DLL.
 *
 * Build: x86_64-w64-mingw32-gcc -shared -O2 -o bcryptprimitives.dll bcryptprimitives.c \
 *            bcryptprimitives.def -ladvapi32
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x7fffffff ? 0x7fffffff : (ULONG)len;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
