//! Progress that tells the truth: work is measured in dynamic-programming cells (query
//! residues x target residues), counted by the engines from inside their long calls, against
//! a total known from the input's size; phases say what runs before the first cell (loading
//! the database, starting the engine) and after the last (writing).
//!
//! Three layers, in this file because they are one concept:
//! - counters the engines and readers update with cheap atomic adds: [`Work`] (cells done)
//!   and the process-wide count of input bytes read ([`CountingRead`]);
//! - the model, pure and unit-tested: [`estimate_total`] and [`Snapshot`] (fraction, rate,
//!   ETA, the line's text);
//! - the reporter, [`Progress`]: one line on stderr, drawn by indicatif, fed the model's
//!   numbers by a thread, only when stderr is a terminal and the user did not ask for
//!   `--quiet`; a one-line summary at the end.
//!
//! The total: cells of the items read so far, scaled by the share of the input file read
//! (bytes, below decompression) while the input is not exhausted, exact once it is. Reading
//! runs ahead of the engines (a few batches), so the estimate settles early. indicatif would
//! estimate an ETA from its position's recent steps alone; the line shows the model's instead,
//! which also accounts for the total growing as input is read.

use std::io::{IsTerminal, Read};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle};

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

/// Counts `n` input bytes read without a [`CountingRead`] (positional reads of a file).
pub fn count_input(n: u64) {
    INPUT_BYTES.fetch_add(n, Relaxed);
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

    /// The total the line draws a bar against: known and not zero (else a spinner).
    fn bar_total(&self) -> Option<u64> {
        self.fraction().and(self.total)
    }

    /// The model's text, drawn after indicatif's bar and percentage (of `done` against
    /// `total`) or after its spinner: `3.1/11.6 Gcells  1.52 GCUPS  ETA 6s  aligning`, with an
    /// unknown total `3.1 Gcells  1.52 GCUPS  4s  aligning`, for a phase that counts nothing
    /// `1m05s starting the engine`.
    pub fn message(&self) -> String {
        let unit = match self.unit {
            Unit::None => return format!("{} {}", clock(self.elapsed), self.phase),
            Unit::Bytes => "B",
            Unit::Cells => "cells",
        };
        let rate = match (self.unit, self.rate()) {
            (Unit::Cells, Some(r)) => format!("{:.2} GCUPS", r / 1e9),
            (Unit::Bytes, Some(r)) => format!("{}/s", scaled(r, "B")),
            _ => "-".to_string(),
        };
        match self.bar_total() {
            Some(total) => {
                let eta = self.eta().map_or_else(|| "--".to_string(), clock);
                format!("{}  {rate}  ETA {eta}  {}", scaled_pair(self.done as f64, total as f64, unit), self.phase)
            }
            None => format!("{}  {rate}  {}  {}", scaled(self.done as f64, unit), clock(self.elapsed), self.phase),
        }
    }
}

/// indicatif's part of the line: a 16-column bar and the percentage, or a spinner; then the
/// model's text, cut to the terminal's width so that the line never wraps.
fn style(bar: bool) -> ProgressStyle {
    let style = |template| ProgressStyle::with_template(template).expect("a valid progress template");
    match bar {
        // indicatif rounds its percentage (99.6% shows as 100%); floored like the bar, 100%
        // means done.
        true => style("[{bar:16}] {percent:>3}% {wide_msg}").progress_chars("#-").with_key(
            "percent",
            |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{}", (state.fraction() * 100.0).floor());
            },
        ),
        false => style("{spinner} {wide_msg}").tick_chars("-\\|/ "),
    }
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
    /// Draws the line; hidden when the reporter is.
    bar: ProgressBar,
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
    /// The bar's style now: a bar (`true`) or a spinner; `None` before the first frame.
    bar_style: Mutex<Option<bool>>,
    /// Results are written to standard output, and it is a terminal.
    stdout_is_terminal: bool,
    feeder: Mutex<Option<std::thread::JoinHandle<()>>>,
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
        // indicatif's stderr target also stays blank where TERM says the terminal cannot erase
        // a line (unset or `dumb`).
        Progress::build(visible, ProgressDrawTarget::stderr(), results_on_stdout && std::io::stdout().is_terminal())
            .start()
    }

    /// A reporter that never draws (library callers, tests).
    pub fn hidden() -> Progress {
        Progress::build(false, ProgressDrawTarget::hidden(), false)
    }

    /// A reporter drawing on `target` when `visible`, not yet fed (see [`Progress::start`]).
    fn build(visible: bool, target: ProgressDrawTarget, stdout_is_terminal: bool) -> Progress {
        // Tests shorten the redraw interval to see many frames of a short run.
        let ms = std::env::var("SWARROW_PROGRESS_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(150u64);
        let target = if visible { target } else { ProgressDrawTarget::hidden() };
        let now = Instant::now();
        Progress(Arc::new(Shared {
            // Cleared also when dropped unfinished, so that no stale line stays behind.
            bar: ProgressBar::with_draw_target(None, target).with_finish(ProgressFinish::AndClear),
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
            bar_style: Mutex::new(None),
            stdout_is_terminal,
            feeder: Mutex::new(None),
        }))
    }

    /// Starts the thread that hands the model's snapshots to indicatif, when visible: the
    /// engines only add to counters, and the line moves while they are inside long calls.
    fn start(self) -> Progress {
        if self.0.visible {
            let p = self.clone();
            let handle = std::thread::Builder::new().name("sw-progress".into()).spawn(move || p.feed()).ok();
            *lock(&self.0.feeder) = handle;
        }
        self
    }

    fn feed(&self) {
        // A wait before the first frame: runs that end at once draw nothing.
        while !self.0.stop.load(Relaxed) {
            std::thread::sleep(self.0.interval);
            if self.0.stop.load(Relaxed) {
                break;
            }
            self.show(&self.snapshot());
        }
    }

    /// Draws `s` through indicatif: done and total as the bar's position and length, so that
    /// its bar and percentage are the model's fraction; the model's text as its message.
    fn show(&self, s: &Snapshot) {
        let bar = &self.0.bar;
        let total = s.bar_total();
        let mut bar_style = lock(&self.0.bar_style);
        if *bar_style != Some(total.is_some()) {
            bar.set_style(style(total.is_some()));
            *bar_style = Some(total.is_some());
        }
        bar.update(|state| {
            if let Some(total) = total {
                state.set_len(total);
            }
            state.set_pos(s.done);
        });
        // indicatif redraws on each of the two calls: the text follows the bar at once.
        bar.set_message(s.message());
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

    /// Items computed and result rows written so far (`--stats`: pairs read, pairs kept).
    pub fn counts(&self) -> (u64, u64) {
        (self.0.items.load(Relaxed), self.0.rows.load(Relaxed))
    }

    /// Runs `write` (results going to stdout) with the progress line off the screen when
    /// stdout is the same terminal (indicatif's suspend: erased, then drawn again below).
    pub fn suspend<T>(&self, rows: u64, write: impl FnOnce() -> T) -> T {
        self.0.rows.fetch_add(rows, Relaxed);
        match self.0.visible && self.0.stdout_is_terminal {
            true => self.0.bar.suspend(write),
            false => write(),
        }
    }

    /// Prints `line` on stderr above the progress line, which stays drawn below it: a note
    /// printed beside the line would be joined to it and erased with its next frame.
    pub fn note(&self, line: &str) {
        match self.0.visible {
            true => self.0.bar.suspend(|| eprintln!("{line}")),
            false => eprintln!("{line}"),
        }
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
        if let Some(handle) = lock(&self.0.feeder).take() {
            let _ = handle.join();
        }
        self.0.bar.finish_and_clear();
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
    fn text_shows_cells_rate_and_eta() {
        let s = snap(Unit::Cells, 3_000_000_000, Some(12_000_000_000), 2.0);
        assert_eq!(s.message(), "3.0/12.0 Gcells  1.50 GCUPS  ETA 6s  aligning");
        let s = snap(Unit::Cells, 12_000_000_000, Some(12_000_000_000), 8.0);
        assert_eq!(s.message(), "12.0/12.0 Gcells  1.50 GCUPS  ETA 0s  aligning");
        // Before the first cell: the ETA unknown.
        let s = snap(Unit::Cells, 0, Some(12_000_000_000), 0.5);
        assert_eq!(s.message(), "0.0/12.0 Gcells  -  ETA --  aligning");
    }

    #[test]
    fn unknown_total_shows_a_rate_and_the_elapsed_time() {
        let s = snap(Unit::Cells, 3_100_000_000, None, 2.0);
        assert_eq!((s.bar_total(), s.message().as_str()), (None, "3.1 Gcells  1.55 GCUPS  2s  aligning"));
        // A zero total (empty input) is drawn as no total, not as a bar of 0/0.
        assert_eq!(snap(Unit::Cells, 0, Some(0), 1.0).bar_total(), None);
        let s = Snapshot {
            phase: "starting the engine".into(),
            unit: Unit::None,
            done: 0,
            total: None,
            elapsed: Duration::from_secs(65),
        };
        assert_eq!(s.message(), "1m05s starting the engine");
        let s = Snapshot {
            phase: "loading the database".into(),
            unit: Unit::Bytes,
            done: 50_000_000,
            total: Some(200_000_000),
            elapsed: Duration::from_secs(1),
        };
        assert_eq!(s.message(), "50.0/200.0 MB  50.0 MB/s  ETA 3s  loading the database");
    }

    /// A reporter drawing on an in-memory terminal of `cols` columns, not fed by its thread
    /// (the tests hand it snapshots), with results going to that terminal.
    fn on_screen(visible: bool, cols: u16) -> (Progress, indicatif::InMemoryTerm) {
        let term = indicatif::InMemoryTerm::new(4, cols);
        let target = ProgressDrawTarget::term_like(Box::new(term.clone()));
        (Progress::build(visible, target, true), term)
    }

    #[test]
    fn indicatif_draws_the_models_fraction_numbers_and_eta() {
        let (p, term) = on_screen(true, 100);
        // 3e9 of 12e9 cells in 2 s. What the line must say, worked out here from those inputs:
        // a quarter of 16 columns filled, 25%, 1.5e9 cells/s, 9e9 cells left at that rate.
        let (done, total, secs) = (3_000_000_000u64, 12_000_000_000u64, 2.0);
        let filled = (16 * done / total) as usize;
        let rate = done as f64 / secs;
        let expected = format!(
            "[{}{}] {:>3}% {:.1}/{:.1} Gcells  {:.2} GCUPS  ETA {}s  aligning",
            "#".repeat(filled),
            "-".repeat(16 - filled),
            100 * done / total,
            done as f64 / 1e9,
            total as f64 / 1e9,
            rate / 1e9,
            ((total - done) as f64 / rate).round(),
        );
        p.show(&snap(Unit::Cells, done, Some(total), secs));
        assert_eq!(term.contents(), expected);

        // Fed from the counters: 3e6 of the 12e6 cells read, the input exhausted.
        p.phase_aligning("aligning", None);
        p.read(12_000_000);
        p.input_done();
        p.work().add(3_000_000);
        p.show(&p.snapshot());
        let line = term.contents();
        assert!(
            line.starts_with("[####------------]  25% 3.0/12.0 Mcells  ") && line.ends_with("  aligning"),
            "{line}"
        );

        // No total yet: a spinner, the cells done and the phase's time.
        p.show(&snap(Unit::Cells, 3_100_000_000, None, 2.0));
        let line = term.contents();
        let (spinner, text) = line.split_at(1);
        assert!("-\\|/".contains(spinner), "{line}");
        assert_eq!(text, format!(" {:.1} Gcells  {:.2} GCUPS  2s  aligning", 3.1, 3.1 / 2.0));

        // Results written to the same terminal find the line erased; it comes back after them.
        assert_eq!(p.suspend(1, || term.contents()), "");
        assert_eq!(term.contents(), line);
        p.stop();
        assert_eq!(term.contents(), "");
    }

    #[test]
    fn the_line_is_cut_to_the_terminal_width() {
        let (p, term) = on_screen(true, 40);
        p.show(&snap(Unit::Cells, 999_000_000_000_000, Some(999_900_000_000_000), 36_000.0));
        let line = term.contents();
        // 99.9% done: not yet 100%.
        assert!(line.starts_with("[###############-]  99% 999.0/999.9 T"), "{line}");
        assert_eq!(line.lines().count(), 1, "{line}");
        assert!(line.chars().count() <= 40, "{line}");
    }

    #[test]
    fn nothing_is_drawn_when_hidden() {
        let (p, term) = on_screen(false, 100);
        p.show(&snap(Unit::Cells, 3_000_000_000, Some(12_000_000_000), 2.0));
        p.phase("writing");
        p.show(&p.snapshot());
        assert_eq!(p.suspend(1, || 7), 7);
        p.finish("queries", Some("hits"), "cpu");
        assert_eq!(term.contents(), "");
        assert!(Progress::hidden().0.bar.is_hidden());
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
