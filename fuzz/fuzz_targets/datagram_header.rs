//! Datagram header view (`wire::datagram`): `DatagramView::new_checked` on arbitrary
//! bytes. Properties: no panic; short inputs are refused with their exact length; for
//! accepted inputs, writing the parsed header back over a copy changes no byte.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wire::datagram::{DatagramView, TooShort, HEADER_BYTES};

fuzz_target!(|data: &[u8]| {
    match DatagramView::new_checked(data) {
        Err(TooShort(len)) => assert!(len == data.len() && len < HEADER_BYTES),
        Ok(view) => {
            assert_eq!(view.len(), data.len());
            let header = view.header();
            let mut copy = data.to_vec();
            match DatagramView::new_checked(&mut copy[..]) {
                Ok(mut w) => w.set_header(&header),
                Err(e) => panic!("same bytes refused the second time: {e}"),
            }
            assert_eq!(copy, data, "header fields do not round-trip");
        }
    }
});
