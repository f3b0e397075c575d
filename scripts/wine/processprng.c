/*
 * bcryptprimitives.dll stand-in for running Go windows/amd64 binaries
 * under Wine 8.0, which does not ship ProcessPrng. Go 1.22 and later
 * call ProcessPrng for all of their randomness and abort at start-up
 * when it is missing. This DLL is for the test prefix `make
 * test-windows` builds and is never shipped with acpdrive.
 *
 * ProcessPrng is answered with advapi32's SystemFunction036
 * (RtlGenRandom), which Wine does implement. RtlGenRandom takes a
 * 32-bit length, so a larger request is filled in pieces.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size)
{
    while (size > 0) {
        ULONG piece = size > 0x40000000 ? 0x40000000 : (ULONG)size;
        if (!SystemFunction036(data, piece))
            return FALSE;
        data += piece;
        size -= piece;
    }
    return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved)
{
    (void)instance;
    (void)reason;
    (void)reserved;
    return TRUE;
}
