//! Typed serde models of the JSON members of a NEFF.
//!
//! Every struct keeps the keys it does not model in an `extra` map, so real
//! compiler output (which carries more than is documented) parses and
//! nothing is lost. String-valued enumerations keep unknown spellings in an
//! `Other` variant instead of failing.

pub mod def;
pub mod engine;
pub mod graph;
pub mod kelf;
pub mod tables;

use serde::de::DeserializeOwned;

use crate::error::{NeffError, Result};

/// Unknown keys of a JSON object, kept in document order.
pub type Extra = serde_json::Map<String, serde_json::Value>;

/// Parses a JSON member into `T`, naming the member on failure.
pub fn parse_member<T: DeserializeOwned>(path: &str, bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes).map_err(|e| NeffError::json(path, e))
}

/// Declares a string-valued enumeration with known spellings and an
/// `Other(String)` catch-all; (de)serializes as a plain JSON string.
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        #[serde(from = "String", into = "String")]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
            /// A spelling this crate does not know, kept verbatim.
            Other(String),
        }

        impl $name {
            /// The JSON spelling.
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$variant => $text,)+
                    $name::Other(s) => s.as_str(),
                }
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                match s.as_str() {
                    $($text => $name::$variant,)+
                    _ => $name::Other(s),
                }
            }
        }

        impl From<$name> for String {
            fn from(v: $name) -> String {
                v.as_str().to_string()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
pub(crate) use string_enum;
