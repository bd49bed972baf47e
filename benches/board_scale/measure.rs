//! Timing child processes: wall time from spawn to reap, peak RSS from `wait4`'s rusage.

use std::io::{Read, Seek};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One run of one command (possibly several processes, e.g. `cat` in batches).
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub wall: Duration,
    /// User plus system CPU time: less disturbed than wall time by other work on the machine.
    pub cpu: Duration,
    /// The largest peak resident set of the processes, in KiB (`ru_maxrss` on Linux).
    pub max_rss_kib: i64,
}

/// Runs `command` to completion with stdout discarded; a failure carries its stderr.
pub fn run(command: &mut Command) -> Result<Sample, String> {
    let mut stderr = tempfile::tempfile().map_err(|e| format!("temp file: {e}"))?;
    let err_handle = stderr.try_clone().map_err(|e| e.to_string())?;
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err_handle);
    let started = Instant::now();
    let child = command
        .spawn()
        .map_err(|e| format!("cannot start {command:?}: {e}"))?;
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain old data; zero is a valid value for every field.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our own child, not yet reaped (std's `Child` never waited on it), and
        // both out-pointers are valid for the call.
        let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if reaped == pid {
            break;
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("wait4 on {pid}: {err}"));
        }
    }
    let wall = started.elapsed();
    // Reaped above; dropping a `Child` neither waits nor kills, so nothing touches the pid again.
    drop(child);
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        let mut text = String::new();
        let _ = stderr.rewind();
        let _ = stderr.read_to_string(&mut text);
        return Err(format!(
            "{command:?} failed (wait status {status:#x}):\n{}",
            text.trim_end()
        ));
    }
    Ok(Sample {
        wall,
        cpu: duration(usage.ru_utime) + duration(usage.ru_stime),
        max_rss_kib: usage.ru_maxrss,
    })
}

/// Runs several commands one after another as one sample: wall times add up, peak RSS is the
/// largest of them.
pub fn run_all(commands: &mut [Command]) -> Result<Sample, String> {
    let mut total = Sample {
        wall: Duration::ZERO,
        cpu: Duration::ZERO,
        max_rss_kib: 0,
    };
    for command in commands {
        let sample = run(command)?;
        total.wall += sample.wall;
        total.cpu += sample.cpu;
        total.max_rss_kib = total.max_rss_kib.max(sample.max_rss_kib);
    }
    Ok(total)
}

fn duration(time: libc::timeval) -> Duration {
    Duration::from_secs(time.tv_sec as u64) + Duration::from_micros(time.tv_usec as u64)
}

/// Median and minimum wall time, median CPU time and the peak RSS over all samples.
pub struct Summary {
    pub median: Duration,
    pub min: Duration,
    pub cpu_median: Duration,
    pub max_rss_kib: i64,
}

pub fn summarise(samples: &[Sample]) -> Summary {
    let walls: Vec<Duration> = samples.iter().map(|s| s.wall).collect();
    let cpus: Vec<Duration> = samples.iter().map(|s| s.cpu).collect();
    Summary {
        median: median(walls.clone()),
        min: walls.iter().copied().min().unwrap_or_default(),
        cpu_median: median(cpus),
        max_rss_kib: samples.iter().map(|s| s.max_rss_kib).max().unwrap_or(0),
    }
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    let mid = values.len() / 2;
    if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) / 2
    } else {
        values[mid]
    }
}

/// This process's own peak resident set (VmHWM) in KiB. Linux charges a child started with
/// vfork+exec (as `Command` does) its parent's peak as well, so this is a floor under every
/// child's `ru_maxrss`.
pub fn own_peak_rss_kib() -> i64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}
