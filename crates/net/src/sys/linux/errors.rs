//! errno meanings: shared with the other Unixes.

pub(crate) use crate::sys::unix_common::{
    is_af_unsupported, is_no_buffer_space, is_unreachable, is_unsupported,
};
