//! Other systems (FreeBSD, …): the interface is named, its radio is not read.

use super::{Field, LinkKind, LinkState, WifiError};
use std::net::IpAddr;

const WHY: &str = "link state is not read on this OS";

pub(super) fn link_state_of(local: IpAddr) -> LinkState {
    let iface = Field::from_option(
        crate::sys::unix_common::interface_name_of(local),
        "no interface holds the address",
    );
    LinkState::without_radio(iface, LinkKind::Unknown, WHY)
}

pub(super) fn wireless_interfaces() -> Result<Vec<String>, WifiError> {
    Err(WifiError::NoService(WHY.into()))
}
