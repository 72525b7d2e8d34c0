//! The model database: every loaded model by id (libnrt's `dlr_model_set`
//! under a rwlock, with `last_nn_id`).
//!
//! The load pipeline inserts a [`LoadedModel`] when a model reaches READY;
//! unload removes it from lookup first, then waits for in-flight
//! executions to release their references.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, RwLock};

/// A model id as the C API hands it out (`nrt_model_t` identity).
pub type ModelId = u32;

/// A model that finished loading. The load pipeline fills in its program,
/// memory plan and device resources.
#[derive(Debug)]
pub struct LoadedModel {
    /// Its id.
    pub id: ModelId,
    /// The NEFF header's name.
    pub name: String,
}

/// All loaded models.
#[derive(Debug, Default)]
pub struct ModelDb {
    last_id: AtomicU32,
    models: RwLock<BTreeMap<ModelId, Arc<LoadedModel>>>,
}

impl ModelDb {
    /// Mints the next model id (ids start at 1 and are never reused).
    pub fn mint_id(&self) -> ModelId {
        self.last_id.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Registers a ready model.
    pub fn insert(&self, model: Arc<LoadedModel>) {
        self.models.write().unwrap_or_else(|e| e.into_inner()).insert(model.id, model);
    }

    /// Looks a model up.
    pub fn get(&self, id: ModelId) -> Option<Arc<LoadedModel>> {
        self.models.read().unwrap_or_else(|e| e.into_inner()).get(&id).cloned()
    }

    /// Removes a model from lookup, returning it so the caller can wait for
    /// its last references and unstage it.
    pub fn remove(&self, id: ModelId) -> Option<Arc<LoadedModel>> {
        self.models.write().unwrap_or_else(|e| e.into_inner()).remove(&id)
    }

    /// Ids of every loaded model (a snapshot, e.g. for close).
    pub fn ids(&self) -> Vec<ModelId> {
        self.models.read().unwrap_or_else(|e| e.into_inner()).keys().copied().collect()
    }
}
