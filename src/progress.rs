//! Progress that tells the truth: work is measured in dynamic-programming cells (query
//! residues x target residues), counted by the engines from inside their long calls, against
//! a total known from the input's size; phases say what runs before the first cell (loading
//! the database, starting the engine) and after the last (writing).
//!
//! Three layers, in this file because they are one concept:
//! - counters the engines and readers update with cheap atomic adds: [`Work`] (cells done)
//!   and the process-wide count of input bytes read ([`CountingRead`]);
//! - the model, pure and unit-tested: [`estimate_total`] and [`Snapshot`] (fraction, rate,
//!   ETA, the rendered line);
//! - the reporter, [`Progress`]: one line on stderr, redrawn by a thread, only when stderr is
//!   a terminal and the user did not ask for `--quiet`; a one-line summary at the end.
//!
//! The total: cells of the items read so far, scaled by the share of the input file read
//! (bytes, below decompression) while the input is not exhausted, exact once it is. Reading
//! runs ahead of the engines (a few batches), so the estimate settles early.

use std::io::{IsTerminal, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Cells computed so far: engines add to it from inside long calls, at coarse granularity
/// (a query against a block of targets), so the cost is one uncontended atomic add per
/// millions of cells.
#[derive(Debug, Default)]
pub struct Work(AtomicU64);

impl Work {
    pub fn new() -> Work {
        Work::default()
    }

    pub fn add(&self, cells: u64) {
        self.0.fetch_add(cells, Relaxed);
    }

    pub fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

/// Bytes read from input files by this process, counted below decompression so that they
/// compare with the files' sizes.
static INPUT_BYTES: AtomicU64 = AtomicU64::new(0);

/// A reader that counts its bytes into the process-wide input counter.
pub struct CountingRead<R>(pub R);

impl<R: Read> Read for CountingRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.read(buf)?;
        INPUT_BYTES.fetch_add(n as u64, Relaxed);
        Ok(n)
    }
}

fn input_bytes() -> u64 {
    INPUT_BYTES.load(Relaxed)
}

/// Size in bytes of the regular files among `paths` (`-` and pipes have none): the total
/// that input progress is measured against, or `None` when any input has no size.
pub fn input_size(paths: &[&std::path::Path]) -> Option<u64> {
    paths
        .iter()
        .map(|p| match std::fs::metadata(p) {
            Ok(m) if p.as_os_str() != "-" && m.is_file() => Some(m.len()),
            _ => None,
        })
        .sum()
}

/// Total cells of the run, from what the reader has seen: exact once the input is
/// exhausted; else the cells read so far scaled by the share of the input's bytes read;
/// unknown while nothing is read or the input has no size (a pipe, stdin).
pub fn estimate_total(cells_read: u64, input_done: bool, bytes: Option<(u64, u64)>) -> Option<u64> {
    if input_done {
        return Some(cells_read);
    }
    match bytes {
        Some((read, total)) if read > 0 && total > 0 && cells_read > 0 => {
            let share = (read.min(total) as f64) / (total as f64);
            Some(((cells_read as f64) / share).round() as u64)
        }
        _ => None,
    }
}

/// What a phase counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Nothing: a spinner with the elapsed time.
    None,
    /// Bytes of input (loading the database).
    Bytes,
    /// Dynamic-programming cells (aligning).
    Cells,
}

/// One moment of a phase, all the model needs to draw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub phase: String,
    pub unit: Unit,
    pub done: u64,
    pub total: Option<u64>,
    /// Time since the phase began.
    pub elapsed: Duration,
}

impl Snapshot {
    /// Share of the total done, in 0..=1.
    pub fn fraction(&self) -> Option<f64> {
        let total = self.total.filter(|&t| t > 0)?;
        Some((self.done.min(total) as f64) / (total as f64))
    }

    /// Units per second since the phase began.
    pub fn rate(&self) -> Option<f64> {
        let secs = self.elapsed.as_secs_f64();
        (self.done > 0 && secs > 0.0).then(|| self.done as f64 / secs)
    }

    /// Time left at the rate so far.
    pub fn eta(&self) -> Option<Duration> {
        let total = self.total?;
        let rate = self.rate()?;
        Some(Duration::from_secs_f64(total.saturating_sub(self.done) as f64 / rate))
    }

    /// The progress line (at most about 75 columns, so it never wraps on a common terminal):
    /// `[#####---------------]  27% 3.1 of 11.6 Gcells  1.52 GCUPS  ETA 6s  aligning`, or
    /// with an unknown total `- 3.1 Gcells  1.52 GCUPS  4s  aligning`.
    pub fn render(&self, tick: usize) -> String {
        const WIDTH: usize = 16;
        let unit = match self.unit {
            Unit::None => return fit(format!("{} {} {}", spinner(tick), clock(self.elapsed), self.phase)),
            Unit::Bytes => "B",
            Unit::Cells => "cells",
        };
        let rate = match (self.unit, self.rate()) {
            (Unit::Cells, Some(r)) => format!("{:.2} GCUPS", r / 1e9),
            (Unit::Bytes, Some(r)) => format!("{}/s", scaled(r, "B")),
            _ => "-".to_string(),
        };
        let line = match (self.fraction(), self.total) {
            (Some(f), Some(total)) => {
                let filled = ((f * WIDTH as f64).floor() as usize).min(WIDTH);
                let eta = self.eta().map_or_else(|| "--".to_string(), clock);
                format!(
                    "[{}{}] {:>3}% {}  {}  ETA {}  {}",
                    "#".repeat(filled),
                    "-".repeat(WIDTH - filled),
                    (f * 100.0).floor() as u32,
                    scaled_pair(self.done as f64, total as f64, unit),
                    rate,
                    eta,
                    self.phase
                )
            }
            _ => format!(
                "{} {}  {}  {}  {}",
                spinner(tick),
                scaled(self.done as f64, unit),
                rate,
                clock(self.elapsed),
                self.phase
            ),
        };
        fit(line)
    }
}

/// Lines stay within 79 columns, so they never wrap (a wrapped line could not be erased).
fn fit(line: String) -> String {
    match line.char_indices().nth(79) {
        Some((end, _)) => line[..end].to_string(),
        None => line,
    }
}

fn spinner(tick: usize) -> char {
    ['-', '\\', '|', '/'][tick % 4]
}

/// `7s`, `2m05s`, `1h02m`.
pub fn clock(d: Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// `950 cells`, `3.1 Mcells`, `11.6 Gcells`, `2.0 Tcells`.
pub fn cells(n: f64) -> String {
    scaled(n, "cells")
}

const PREFIXES: [(f64, &str); 5] = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];

fn scaled(n: f64, unit: &str) -> String {
    match PREFIXES.iter().find(|(scale, _)| n >= *scale) {
        Some((scale, prefix)) => format!("{:.1} {prefix}{unit}", n / scale),
        None => format!("{n:.0} {unit}"),
    }
}

/// `3.0/12.0 Gcells`: both in the total's scale.
fn scaled_pair(done: f64, total: f64, unit: &str) -> String {
    match PREFIXES.iter().find(|(scale, _)| total >= *scale) {
        Some((scale, prefix)) => format!("{:.1}/{:.1} {prefix}{unit}", done / scale, total / scale),
        None => format!("{done:.0}/{total:.0} {unit}"),
    }
}

/// The one-line summary printed when the run ends: `20 queries, 200 hits, 11.6 Gcells in
/// 8.4 s (1.45 GCUPS) on cpu-simd avx2 (2 threads)`; the rate is over the aligning phase,
/// the time is the whole run's.
pub fn summary(counts: &str, cells_done: u64, compute: Duration, wall: Duration, engine: &str) -> String {
    let secs = compute.as_secs_f64();
    let gcups = if secs > 0.0 { cells_done as f64 / secs / 1e9 } else { 0.0 };
    format!(
        "{counts}, {} in {:.1} s ({gcups:.2} GCUPS){}",
        cells(cells_done as f64),
        wall.as_secs_f64(),
        if engine.is_empty() { String::new() } else { format!(" on {engine}") }
    )
}

/// The phase being drawn.
struct Phase {
    name: String,
    unit: Unit,
    start: Instant,
    /// Input bytes counter at the phase's start, and the bytes the phase reads in all.
    bytes_base: u64,
    bytes_total: Option<u64>,
}

struct Shared {
    visible: bool,
    interval: Duration,
    start: Instant,
    work: Work,
    cells_read: AtomicU64,
    input_done: AtomicBool,
    items: AtomicU64,
    rows: AtomicU64,
    stop: AtomicBool,
    phase: Mutex<Phase>,
    /// When the aligning phase began, for the summary's rate.
    compute_start: Mutex<Option<Instant>>,
    /// Held while drawing, and while results go to a terminal stdout, so the two never mix.
    terminal: Mutex<()>,
    /// Whether a progress line is on the screen now.
    drawn: AtomicBool,
    /// Results are written to standard output, and it is a terminal.
    stdout_is_terminal: bool,
    drawer: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// The reporter of one command. Hidden (counting only) when stderr is not a terminal or
/// `--quiet` is given: then nothing but warnings and errors reach stderr.
#[derive(Clone)]
pub struct Progress(Arc<Shared>);

impl Progress {
    /// `results_on_stdout`: results go to standard output, which the line must make way for
    /// when it is the same terminal.
    pub fn new(quiet: bool, results_on_stdout: bool) -> Progress {
        let visible = !quiet && std::io::stderr().is_terminal();
        Progress::with_visibility(visible, results_on_stdout && std::io::stdout().is_terminal())
    }

    /// A reporter that never draws (library callers, tests).
    pub fn hidden() -> Progress {
        Progress::with_visibility(false, false)
    }

    fn with_visibility(visible: bool, stdout_is_terminal: bool) -> Progress {
        // Tests shorten the redraw interval to see many frames of a short run.
        let ms = std::env::var("SWARROW_PROGRESS_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(150u64);
        let now = Instant::now();
        let shared = Arc::new(Shared {
            visible,
            interval: Duration::from_millis(ms.max(1)),
            start: now,
            work: Work::new(),
            cells_read: AtomicU64::new(0),
            input_done: AtomicBool::new(false),
            items: AtomicU64::new(0),
            rows: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            phase: Mutex::new(Phase {
                name: "starting".into(),
                unit: Unit::None,
                start: now,
                bytes_base: 0,
                bytes_total: None,
            }),
            compute_start: Mutex::new(None),
            terminal: Mutex::new(()),
            drawn: AtomicBool::new(false),
            stdout_is_terminal,
            drawer: Mutex::new(None),
        });
        if visible {
            let s = shared.clone();
            let handle = std::thread::Builder::new().name("progress".into()).spawn(move || draw_loop(&s)).ok();
            *lock(&shared.drawer) = handle;
        }
        Progress(shared)
    }

    /// The counter engines add computed cells to.
    pub fn work(&self) -> &Work {
        &self.0.work
    }

    /// A phase with a spinner only (starting the engine, writing).
    pub fn phase(&self, name: &str) {
        self.set_phase(name, Unit::None, None);
    }

    /// A phase that reads `total` input bytes (loading the database), drawn as a bar.
    pub fn phase_reading(&self, name: &str, total: Option<u64>) {
        self.set_phase(name, Unit::Bytes, total);
    }

    /// The aligning phase: cells against the total estimated from what the reader has seen
    /// of inputs of `input_bytes` bytes (`None`: a pipe; the total is known at its end).
    pub fn phase_aligning(&self, name: &str, input_bytes: Option<u64>) {
        self.set_phase(name, Unit::Cells, input_bytes);
        *lock(&self.0.compute_start) = Some(Instant::now());
    }

    fn set_phase(&self, name: &str, unit: Unit, bytes_total: Option<u64>) {
        *lock(&self.0.phase) =
            Phase { name: name.to_string(), unit, start: Instant::now(), bytes_base: input_bytes(), bytes_total };
    }

    /// The reader passed on items worth `cells`.
    pub fn read(&self, cells: u64) {
        self.0.cells_read.fetch_add(cells, Relaxed);
    }

    /// The reader reached the end of the input: the total is now exact.
    pub fn input_done(&self) {
        self.0.input_done.store(true, Relaxed);
    }

    /// `n` queries or pairs went through the engine.
    pub fn items(&self, n: u64) {
        self.0.items.fetch_add(n, Relaxed);
    }

    /// Runs `write` (results going to stdout) with the progress line off the screen when
    /// stdout is the same terminal, so no stale line is left between result lines.
    pub fn suspend<T>(&self, rows: u64, write: impl FnOnce() -> T) -> T {
        self.0.rows.fetch_add(rows, Relaxed);
        if !(self.0.visible && self.0.stdout_is_terminal) {
            return write();
        }
        let _guard = lock(&self.0.terminal);
        clear(&self.0);
        write()
    }

    /// The current state of the phase, as the model sees it.
    pub fn snapshot(&self) -> Snapshot {
        let s = &self.0;
        let phase = lock(&s.phase);
        let (done, total) = match phase.unit {
            Unit::None => (0, None),
            Unit::Bytes => (input_bytes().saturating_sub(phase.bytes_base), phase.bytes_total),
            Unit::Cells => {
                let bytes_read = input_bytes().saturating_sub(phase.bytes_base);
                let total = estimate_total(
                    s.cells_read.load(Relaxed),
                    s.input_done.load(Relaxed),
                    phase.bytes_total.map(|t| (bytes_read, t)),
                );
                (s.work.get(), total)
            }
        };
        Snapshot { phase: phase.name.clone(), unit: phase.unit, done, total, elapsed: phase.start.elapsed() }
    }

    /// Stops drawing and clears the line; on a terminal, prints the summary line: the items
    /// computed, named `item_name` (queries, pairs), and the result rows, named `row_name`
    /// where they differ from the items (hits).
    pub fn finish(&self, item_name: &str, row_name: Option<&str>, engine: &str) {
        self.stop();
        if !self.0.visible {
            return;
        }
        let s = &self.0;
        let compute = lock(&s.compute_start).map_or(Duration::ZERO, |t| t.elapsed());
        let mut counts = format!("{} {item_name}", s.items.load(Relaxed));
        if let Some(row_name) = row_name {
            counts += &format!(", {} {row_name}", s.rows.load(Relaxed));
        }
        let line = summary(&counts, s.work.get(), compute, s.start.elapsed(), engine);
        eprintln!("swarrow: {line}");
    }

    /// Stops drawing and clears the line (also on failure, before the error is printed).
    pub fn stop(&self) {
        self.0.stop.store(true, Relaxed);
        if let Some(handle) = lock(&self.0.drawer).take() {
            let _ = handle.join();
        }
        let _guard = lock(&self.0.terminal);
        clear(&self.0);
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress").field("visible", &self.0.visible).finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Erases the progress line if one is drawn (call with the terminal lock held).
fn clear(s: &Shared) {
    if s.drawn.swap(false, Relaxed) {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(b"\r\x1b[2K");
        let _ = err.flush();
    }
}

fn draw_loop(s: &Arc<Shared>) {
    let progress = Progress(s.clone());
    let mut tick = 0;
    // A short first wait: runs that end at once draw nothing.
    while !s.stop.load(Relaxed) {
        std::thread::sleep(s.interval);
        if s.stop.load(Relaxed) {
            break;
        }
        let line = progress.snapshot().render(tick);
        tick += 1;
        let _guard = lock(&s.terminal);
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{line}");
        let _ = err.flush();
        s.drawn.store(true, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(unit: Unit, done: u64, total: Option<u64>, secs: f64) -> Snapshot {
        Snapshot { phase: "aligning".into(), unit, done, total, elapsed: Duration::from_secs_f64(secs) }
    }

    #[test]
    fn total_is_exact_at_end_of_input_and_scaled_by_bytes_before() {
        // 20 queries of 300 residues against 1e6 residues, all read: exact.
        assert_eq!(estimate_total(6_000_000_000, true, None), Some(6_000_000_000));
        assert_eq!(estimate_total(6_000_000_000, true, Some((10, 100))), Some(6_000_000_000));
        // A quarter of the file read, holding 1e9 cells: 4e9 in all.
        assert_eq!(estimate_total(1_000_000_000, false, Some((250, 1000))), Some(4_000_000_000));
        // A reader past the file's size (it grew) counts as all of it.
        assert_eq!(estimate_total(7, false, Some((1200, 1000))), Some(7));
        // A pipe: no size, no total until its end; nothing read yet: no total.
        assert_eq!(estimate_total(1_000, false, None), None);
        assert_eq!(estimate_total(0, false, Some((0, 1000))), None);
    }

    #[test]
    fn rate_and_eta_follow_the_cells_done() {
        // 3e9 of 12e9 cells in 2 s: 1.5e9 cells/s, 9e9 left -> 6 s.
        let s = snap(Unit::Cells, 3_000_000_000, Some(12_000_000_000), 2.0);
        assert_eq!(s.fraction(), Some(0.25));
        assert_eq!(s.rate(), Some(1.5e9));
        assert_eq!(s.eta(), Some(Duration::from_secs(6)));
        // Nothing done yet: no rate, so no ETA (not an infinite one).
        let s = snap(Unit::Cells, 0, Some(100), 1.0);
        assert_eq!((s.rate(), s.eta()), (None, None));
        // Done beyond an estimated total: 100%, ETA 0.
        let s = snap(Unit::Cells, 150, Some(100), 1.0);
        assert_eq!((s.fraction(), s.eta()), (Some(1.0), Some(Duration::ZERO)));
    }

    #[test]
    fn line_shows_bar_percent_cells_rate_and_eta() {
        let s = snap(Unit::Cells, 3_000_000_000, Some(12_000_000_000), 2.0);
        assert_eq!(s.render(0), "[####------------]  25% 3.0/12.0 Gcells  1.50 GCUPS  ETA 6s  aligning");
        let s = snap(Unit::Cells, 12_000_000_000, Some(12_000_000_000), 8.0);
        assert_eq!(s.render(0), "[################] 100% 12.0/12.0 Gcells  1.50 GCUPS  ETA 0s  aligning");
        // Before the first cell: the bar is empty and the ETA unknown.
        let s = snap(Unit::Cells, 0, Some(12_000_000_000), 0.5);
        assert_eq!(s.render(0), "[----------------]   0% 0.0/12.0 Gcells  -  ETA --  aligning");
        // The longest lines still fit 79 columns.
        let s = snap(Unit::Cells, 999_000_000_000_000, Some(999_900_000_000_000), 36_000.0);
        assert!(s.render(0).chars().count() <= 79, "{}", s.render(0));
    }

    #[test]
    fn unknown_total_shows_a_rate_and_the_elapsed_time() {
        let s = snap(Unit::Cells, 3_100_000_000, None, 2.0);
        assert_eq!(s.render(1), "\\ 3.1 Gcells  1.55 GCUPS  2s  aligning");
        let s = Snapshot {
            phase: "starting the engine".into(),
            unit: Unit::None,
            done: 0,
            total: None,
            elapsed: Duration::from_secs(65),
        };
        assert_eq!(s.render(2), "| 1m05s starting the engine");
        let s = Snapshot {
            phase: "loading the database".into(),
            unit: Unit::Bytes,
            done: 50_000_000,
            total: Some(200_000_000),
            elapsed: Duration::from_secs(1),
        };
        assert_eq!(s.render(0), "[####------------]  25% 50.0/200.0 MB  50.0 MB/s  ETA 3s  loading the database");
    }

    #[test]
    fn units_scale_and_clock_reads_naturally() {
        assert_eq!(cells(950.0), "950 cells");
        assert_eq!(cells(3_140_000.0), "3.1 Mcells");
        assert_eq!(cells(2.0e12), "2.0 Tcells");
        assert_eq!(clock(Duration::from_millis(7400)), "7s");
        assert_eq!(clock(Duration::from_secs(125)), "2m05s");
        assert_eq!(clock(Duration::from_secs(3720)), "1h02m");
    }

    #[test]
    fn summary_names_items_rows_cells_rate_and_engine() {
        let line = summary(
            "20 queries, 200 hits",
            11_600_000_000,
            Duration::from_secs(8),
            Duration::from_secs_f64(8.44),
            "cpu-simd avx2 (2 threads)",
        );
        assert_eq!(line, "20 queries, 200 hits, 11.6 Gcells in 8.4 s (1.45 GCUPS) on cpu-simd avx2 (2 threads)");
    }

    #[test]
    fn counters_feed_the_snapshot() {
        let p = Progress::hidden();
        p.phase_aligning("aligning", None);
        p.read(1000);
        p.work().add(250);
        let s = p.snapshot();
        assert_eq!((s.unit, s.done, s.total), (Unit::Cells, 250, None));
        p.input_done();
        p.work().add(250);
        let s = p.snapshot();
        assert_eq!((s.done, s.total, s.fraction()), (500, Some(1000), Some(0.5)));
        p.stop();
    }

    #[test]
    fn counting_reader_counts_bytes_read() {
        let before = input_bytes();
        let mut r = CountingRead(&b"hello world"[..]);
        let mut buf = Vec::new();
        r.read_to_end(&mut buf).unwrap();
        // Other tests may read files at the same time: at least our 11 bytes.
        assert!(input_bytes() - before >= 11);
    }
}
