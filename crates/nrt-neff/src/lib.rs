//! NEFF container: header, archive, typed def.json / engine JSON.
