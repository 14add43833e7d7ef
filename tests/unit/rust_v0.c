/* Unit tests for src/common/rust_v0.c: v0-mangled Rust names as people
 * read them (rustc-demangle's form without hashes), from names rustc
 * emits: crate roots, nested paths, inherent and trait impls, closures,
 * generic arguments in values and types, consts, dyn traits with
 * associated types, function pointers, backreferences and the
 * instantiating crate. Malformed names, names that are not v0, and an
 * output buffer that is too small give false and an empty string. */
#include "check.h"

#include "common/demangle.h"
#include "common/rust_v0.h"

static void expect(const char *mangled, const char *want)
{
    char out[512];
    if (!lb_rust_v0_demangle(mangled, out, sizeof out))
        CHECK_FAIL_("%s: not demangled (want %s)", mangled, want);
    ASSERT_STR_EQ(out, want);
}

static void test_paths(void)
{
    expect("_RNvC6_123foo3bar", "123foo::bar");
    expect("_RNvNtNtNtNtCs92dm3009vxr_4rand4rngs7adapter9reseeding4fork23FORK_HANDLER_REGISTERED",
           "rand::rngs::adapter::reseeding::fork::FORK_HANDLER_REGISTERED");
    expect("_RNvNtCs1234_7mycrate3foo3bar.llvm.123456", "mycrate::foo::bar");
}

static void test_closures_and_impls(void)
{
    expect("_RNCNCNgCs6DXkGYLi8lr_2cc5spawn00B5_", "cc::spawn::{closure#0}::{closure#0}");
    expect("_RNvMsr_NtCs3ssYzQotkvD_3std4pathNtB5_7PathBuf3newCs15kBYyAo9fc_7mycrate",
           "<std::path::PathBuf>::new");
    expect("_RNvXs_NtCs1_3std3fooNtB4_3BarNtNtCs2_4core3ops4Drop4drop",
           "<std::foo::Bar as core::ops::Drop>::drop");
}

static void test_generics_and_consts(void)
{
    expect("_RMC0INtC8arrayvec8ArrayVechKj7b_E", "<arrayvec::ArrayVec<u8, 123>>");
    expect("_RMCs4fqI2P2rA04_13const_genericINtB0_8UnsignedKhb_E", "<const_generic::Unsigned<11>>");
    expect("_RNvNvMCs4fqI2P2rA04_13const_genericINtB4_3FooKpE3foo3FOO",
           "<const_generic::Foo<_>>::foo::FOO");
    expect("_RINbNbCskIICzLVDPPb_5alloc5alloc8box_freeDINbNiB4_5boxed5FnBoxuEp6OutputuEL_"
           "ECs1iopQbuBiw2_3std",
           "alloc::alloc::box_free::<dyn alloc::boxed::FnBox<(), Output = ()>>");
    /* from Rust 1.95's std, as binutils' c++filt reads it less the crate hashes */
    expect(
        "_RINvMNtNtNtCsjrHSEGnQ3l9_3std4sync4mpmc7counterINtB3_6SenderINtNtB5_4list7ChannelyEE7"
        "releaseNCNvXs4_B5_INtB5_6SenderyENtNtNtCsgEmfK2I1SDS_4core3ops4drop4Drop4drops_0ECsaevXNu"
        "E4z7u_13gt_futex_rust",
        "<std::sync::mpmc::counter::Sender<std::sync::mpmc::list::Channel<u64>>>::release::<<std::"
        "sync::mpmc::Sender<u64> as core::ops::drop::Drop>::drop::{closure#1}>");
}

static void test_types(void)
{
    expect("_RINvC1a1fTRL_hQmPaOFKCyEuEE",
           "a::f::<(&u8, &mut u32, *const i8, *mut extern \"C\" fn(u64))>");
    expect("_RINvC1a1fASjj3_E", "a::f::<[[usize]; 3]>");
    expect("_RINvC1a1fThEE", "a::f::<(u8,)>");
}

static void test_rejects(void)
{
    const char *bad[] = { "_ZN3foo3barE", "main",         "_R",         "_RNvC3foo",
                          "_RB_",         "_RNvCB0_3foo", "_RC3fooXYZ", "_RINvC1a1fhh" };
    char out[64];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (lb_rust_v0_demangle(bad[i], out, sizeof out))
            CHECK_FAIL_("%s: demangled as %s", bad[i], out);
        ASSERT_STR_EQ(out, "");
    }
    char tiny[8];
    ASSERT_TRUE(!lb_rust_v0_demangle("_RNvNtCs1234_7mycrate3foo3bar", tiny, sizeof tiny));
    ASSERT_STR_EQ(tiny, "");
}

static void test_demangle_dup(void)
{
    char *v0 = lb_demangle_dup("_RNvNtCs1234_7mycrate3foo3bar");
    ASSERT_STR_EQ(v0, "mycrate::foo::bar");
    free(v0);
    char *legacy = lb_demangle_dup("_ZN2gt11slow_holder17h0123456789abcdefE");
    ASSERT_STR_EQ(legacy, "gt::slow_holder");
    free(legacy);
    ASSERT_NULL(lb_demangle_dup("hold_and_release"));
    ASSERT_NULL(lb_demangle_dup("_Rgarbage"));
    ASSERT_STR_EQ(lb_demangled("plain_c"), "plain_c");
}

CHECK_MAIN(test_paths, test_closures_and_impls, test_generics_and_consts, test_types, test_rejects,
           test_demangle_dup)
