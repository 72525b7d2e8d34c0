//! The driver portal.
