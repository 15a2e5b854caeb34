//! [`section!`] declares one settings section once: each key with its type, default, optional
//! allowed range ([`Bound`](super::check::Bound)) and one-line doc. From that one declaration come
//! the resolved struct, the all-`Option` layer a file or the flags fill, merging (later layer
//! wins), reading from TOML with warnings, range checks, and the key reference (`docs/config.md`).

macro_rules! section {
    ($(#[doc = $sdoc:literal])* $name:ident / $layer:ident {
        $( $(#[doc = $doc:literal])* $field:ident : $ty:ty = $default:expr $(=> $bound:expr)? ),* $(,)?
    }) => {
        $(#[doc = $sdoc])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        pub struct $name { $( $(#[doc = $doc])* pub $field: $ty, )* }

        impl Default for $name {
            fn default() -> Self { Self { $( $field: $default, )* } }
        }

        #[doc = concat!("One layer (file or flags) of [`", stringify!($name), "`]: `None` means not set here.")]
        #[derive(Debug, Clone, Default)]
        pub(crate) struct $layer { $( pub $field: Option<$ty>, )* }

        impl $layer {
            /// Fields set in `later` win over fields set in `self`.
            pub fn overwrite(self, later: $layer) -> $layer {
                $layer { $( $field: later.$field.or(self.$field), )* }
            }

            /// The settings this layer describes, with defaults for unset fields.
            pub fn resolve(&self) -> $name {
                let d = $name::default();
                $name { $( $field: self.$field.clone().unwrap_or(d.$field), )* }
            }

            /// Reads the layer from a TOML table; bad or unknown keys become warnings.
            pub(crate) fn from_table(section: &str, mut table: toml::Table, warnings: &mut Vec<String>) -> $layer {
                let defaults = $name::default();
                let layer = $layer { $(
                    $field: table.remove(stringify!($field)).and_then(|v| {
                        let shown = v.to_string();
                        match <$ty as serde::Deserialize>::deserialize(v) {
                            Ok(x) => Some(x),
                            Err(e) => {
                                warnings.push(format!(
                                    "config: [{}] {} = {} is invalid ({}); using the default {:?}",
                                    section, stringify!($field), shown, e.message(), defaults.$field));
                                None
                            }
                        }
                    }),
                )* };
                for key in table.keys() {
                    warnings.push(format!("config: unknown key [{}] {}; ignored", section, key));
                }
                layer
            }
        }

        impl $name {
            /// The section's doc, as the key reference shows it.
            pub(crate) const DOC: &'static str = concat!($($sdoc, "\n"),*);

            /// Every key's problems (range checks in declaration order, then the section's own
            /// rules), each naming the key, its value and what is allowed.
            pub(crate) fn problems(&self, section: &'static str) -> Vec<String> {
                #[allow(unused_imports)]
                use super::check::Bounded as _;
                let mut c = super::check::Check::new(section);
                $( $( self.$field.check(stringify!($field), &$bound, &mut c); )? )*
                super::check::Rules::rules(self, &mut c);
                c.problems
            }

            /// The section's keys as `docs/config.md` lists them.
            pub(crate) fn keys() -> Vec<super::reference::Key> {
                let d = $name::default();
                vec![ $( super::reference::Key {
                    name: stringify!($field),
                    ty: stringify!($ty),
                    default: super::reference::show(&d.$field),
                    allowed: bound_text!($($bound)?),
                    doc: concat!($($doc, "\n"),*),
                }, )* ]
            }
        }
    };
}

/// A key's allowed values as text, when it declares a bound.
macro_rules! bound_text {
    () => {
        None
    };
    ($bound:expr) => {
        Some($bound.to_string())
    };
}

pub(crate) use {bound_text, section};
