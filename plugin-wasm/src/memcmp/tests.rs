//! The guest's `memcmp` against the slices' own order, at every length a comparison takes a
//! different path for and every place the first difference can be.

/// `compare` on two equally long byte strings agrees in sign with `Ord` on slices.
#[track_caller]
fn check(left: &[u8], right: &[u8]) {
    assert_eq!(left.len(), right.len());
    // SAFETY: both slices are readable for their length.
    let got = unsafe { super::compare(left.as_ptr(), right.as_ptr(), left.len()) };
    let want = left.cmp(right) as i32;
    assert_eq!(got.signum(), want, "compare({left:?}, {right:?})");
}

#[test]
fn compares_like_slices() {
    for n in (0..=40).chain([63, 64, 65, 200]) {
        let base: Vec<u8> = (0..n).map(|i| (i * 37 % 251) as u8).collect();
        check(&base, &base);
        for at in 0..n {
            for delta in [1u8, 0x7f, 0x80, 0xff] {
                let mut other = base.clone();
                other[at] = other[at].wrapping_add(delta);
                check(&base, &other);
                check(&other, &base);
                // A later difference the other way must not change the answer.
                if at + 1 < n {
                    other[n - 1] = base[n - 1].wrapping_sub(delta);
                    check(&base, &other);
                    check(&other, &base);
                }
            }
        }
    }
}
