//! Threads of swarrow's own stages, spawned with names (`sw-<stage>`), so `top -H`, `perf`
//! and `/proc/PID/task/*/comm` say which stage is busy (a name is at most 15 bytes there).
//! Spawning fails only when the system is out of threads; that panics, as `std::thread::spawn`.
//!
//! Each thread's CPU time is kept by stage (its name without the number) for `--stats`:
//! a thread that ends adds its own when it ends, live ones are read from `/proc` ([`cpu_by_stage`]).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::thread::{Builder, JoinHandle, Scope, ScopedJoinHandle};
use std::time::Duration;

/// CPU time of a stage's threads and how many there were.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StageCpu {
    pub threads: usize,
    pub cpu: Duration,
}

/// What the threads that ended used, by stage.
static ENDED: Mutex<BTreeMap<String, StageCpu>> = Mutex::new(BTreeMap::new());

/// The stage of a thread name: `sw-gather-3` and `sw-gather-0` are `sw-gather`.
fn stage_of(name: &str) -> &str {
    match name.rsplit_once('-') {
        Some((stage, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => stage,
        _ => name,
    }
}

fn add(stages: &mut BTreeMap<String, StageCpu>, name: &str, cpu: Duration) {
    let stage = stages.entry(stage_of(name).to_string()).or_default();
    stage.threads += 1;
    stage.cpu += cpu;
}

/// The calling thread's CPU time (user and system).
fn own_cpu() -> Duration {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Adds the thread's CPU time to its stage when the thread ends (a panic included).
struct Recorded(String);

impl Drop for Recorded {
    fn drop(&mut self) {
        let cpu = own_cpu();
        add(&mut ENDED.lock().unwrap_or_else(|p| p.into_inner()), &self.0, cpu);
    }
}

/// CPU time by stage of every thread of the process so far: those that ended as recorded,
/// live ones (pools, the main thread, named by the process) from `/proc/self/task`.
pub fn cpu_by_stage() -> BTreeMap<String, StageCpu> {
    let mut stages = ENDED.lock().unwrap_or_else(|p| p.into_inner()).clone();
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return stages };
    for task in tasks.flatten() {
        let read = |file: &str| std::fs::read_to_string(task.path().join(file)).ok();
        let (Some(name), Some(stat)) = (read("comm"), read("stat")) else { continue };
        // Fields after the parenthesised name: state is the first, utime the 12th, stime the 13th.
        let Some((_, rest)) = stat.rsplit_once(')') else { continue };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let tick = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
        add(&mut stages, name.trim(), Duration::from_secs_f64((tick(11) + tick(12)) as f64 / ticks));
    }
    stages
}

/// `std::thread::spawn`, named.
pub(crate) fn spawn<F, T>(name: &str, f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let recorded = Recorded(name.into());
    let f = move || {
        let _recorded = recorded;
        f()
    };
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
    let recorded = Recorded(name.into());
    let f = move || {
        let _recorded = recorded;
        f()
    };
    Builder::new()
        .name(name.into())
        .spawn_scoped(scope, f)
        .unwrap_or_else(|e| panic!("failed to spawn thread {name}: {e}"))
}

/// The most workers a pool may have: 8 per core, at least 64. More only slow a run down (a
/// `--threads 100000` would spend minutes starting threads before the first result).
pub(crate) fn max_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.saturating_mul(8).max(64)
}

/// A rayon pool of `threads` workers named `<name>-<i>`. More than [`max_threads`] is a
/// usage error; a pool the system cannot start (thread limits) an I/O error, not a bug.
pub(crate) fn pool(name: &'static str, threads: usize) -> crate::Result<rayon::ThreadPool> {
    let limit = max_threads();
    if threads > limit {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        return Err(crate::Error::usage(format!(
            "--threads {threads} is more than this machine can use: it has {cores} cores; give at most {limit} \
             (or leave --threads out: all cores)"
        )));
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(move |i| format!("{name}-{i}"))
        .exit_handler(move |_| drop(Recorded(name.into())))
        .build()
        .map_err(|e| crate::Error::io(format!("cannot start {threads} threads"), std::io::Error::other(e.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_are_names_without_their_number() {
        for (name, stage) in
            [("sw-gather-12", "sw-gather"), ("sw-read", "sw-read"), ("swarrow", "swarrow"), ("sw-x2", "sw-x2")]
        {
            assert_eq!(stage_of(name), stage);
        }
    }

    // A thread that spins for a known CPU time is counted under its stage after it ended.
    #[test]
    fn an_ended_thread_counts_its_cpu_under_its_stage() {
        let before = cpu_by_stage().get("sw-test-spin").copied().unwrap_or_default();
        spawn("sw-test-spin-0", || {
            let start = own_cpu();
            while own_cpu() - start < Duration::from_millis(50) {}
        })
        .join()
        .unwrap();
        let after = cpu_by_stage()["sw-test-spin"];
        assert_eq!(after.threads, before.threads + 1);
        let added = after.cpu - before.cpu;
        assert!(added >= Duration::from_millis(50) && added < Duration::from_secs(5), "{added:?}");
    }
}
