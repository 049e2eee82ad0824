//! Threads of swarrow's own stages, spawned with names (`sw-<stage>`), so `top -H`, `perf`
//! and `/proc/PID/task/*/comm` say which stage is busy (a name is at most 15 bytes there).
//! Spawning fails only when the system is out of threads; that panics, as `std::thread::spawn`.

use std::thread::{Builder, JoinHandle, Scope, ScopedJoinHandle};

/// `std::thread::spawn`, named.
pub(crate) fn spawn<F, T>(name: &str, f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    Builder::new().name(name.into()).spawn(f).unwrap_or_else(|e| panic!("failed to spawn thread {name}: {e}"))
}

/// `Scope::spawn`, named.
pub(crate) fn spawn_scoped<'scope, 'env, F, T>(
    scope: &'scope Scope<'scope, 'env>,
    name: &str,
    f: F,
) -> ScopedJoinHandle<'scope, T>
where
    F: FnOnce() -> T + Send + 'scope,
    T: Send + 'scope,
{
    Builder::new()
        .name(name.into())
        .spawn_scoped(scope, f)
        .unwrap_or_else(|e| panic!("failed to spawn thread {name}: {e}"))
}

/// A rayon pool of `threads` workers named `<name>-<i>`.
pub(crate) fn pool(name: &'static str, threads: usize) -> crate::Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(move |i| format!("{name}-{i}"))
        .build()
        .map_err(|e| crate::Error::Internal(format!("cannot start {threads} threads: {e}")))
}
