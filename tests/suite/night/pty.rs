//! A pseudo-terminal for tests that type at the tool as a person does: the child gets the pty
//! as its controlling terminal, so Ctrl-C (byte 3) raises SIGINT and Ctrl-D (byte 4) ends input,
//! exactly as a keyboard would.

use std::ffi::CStr;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const CTRL_C: &[u8] = b"\x03";
pub const CTRL_D: &[u8] = b"\x04";

pub struct Pty {
    master: File,
    output: Arc<Mutex<Vec<u8>>>,
    child: Child,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Pty {
    /// Starts `command` with the pty as its stdin, stdout, stderr and controlling terminal.
    pub fn spawn(command: Command) -> Pty {
        Pty::spawn_after(command, |_| {})
    }

    /// [`Pty::spawn`], with `before_start` given the terminal's path first.
    pub fn spawn_after(mut command: Command, before_start: impl FnOnce(&str)) -> Pty {
        let (master, slave, tty) = open_pair();
        before_start(&tty);
        command
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        // SAFETY: only async-signal-safe calls between fork and exec: a new session, and the
        // pty (already the child's stdin) made its controlling terminal.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("start the command on the pty");
        // The parent's copies of the slave were moved into the command and are closed with it,
        // so the master reads EIO once the child is gone.
        drop(command);
        let output = Arc::new(Mutex::new(Vec::new()));
        let mut reading = master.try_clone().unwrap();
        let sink = Arc::clone(&output);
        let reader = std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(read) = reading.read(&mut buffer) {
                if read == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buffer[..read]);
            }
        });
        Pty {
            master,
            output,
            child,
            reader: Some(reader),
        }
    }

    /// Types bytes, as a person does.
    pub fn send(&mut self, bytes: &[u8]) {
        self.master.write_all(bytes).unwrap();
        self.master.flush().unwrap();
    }

    /// Everything the child wrote so far, escape sequences included.
    pub fn output(&self) -> String {
        String::from_utf8_lossy(&self.output.lock().unwrap()).into_owned()
    }

    /// Waits until the output holds `needle` `times` times; panics with the output on timeout.
    #[track_caller]
    pub fn expect_times(&self, needle: &str, times: usize, timeout: Duration) {
        let start = Instant::now();
        loop {
            if self.output().matches(needle).count() >= times {
                return;
            }
            assert!(
                start.elapsed() < timeout,
                "no {needle:?} (×{times}) within {timeout:?}; output:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    #[track_caller]
    pub fn expect(&self, needle: &str, timeout: Duration) {
        self.expect_times(needle, 1, timeout);
    }

    /// Waits for the child to end; its exit code (-1 for a signal) and its whole output.
    #[track_caller]
    pub fn finish(mut self, timeout: Duration) -> (i32, String) {
        let start = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if start.elapsed() > timeout {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "the command did not end within {timeout:?}:\n{}",
                    self.output()
                );
            }
            std::thread::sleep(Duration::from_millis(25));
        };
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        (status.code().unwrap_or(-1), self.output())
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        // A test that failed halfway leaves no process behind.
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A new pty pair, 120 columns by 40 rows.
fn open_pair() -> (File, File, String) {
    // SAFETY: plain libc calls on a descriptor this function owns; every result is checked.
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(
            master >= 0,
            "posix_openpt: {}",
            std::io::Error::last_os_error()
        );
        assert_eq!(libc::grantpt(master), 0);
        assert_eq!(libc::unlockpt(master), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(master, name.as_mut_ptr(), name.len()), 0);
        let path = CStr::from_ptr(name.as_ptr());
        let tty = path.to_string_lossy().into_owned();
        let slave = libc::open(path.as_ptr(), libc::O_RDWR | libc::O_NOCTTY);
        assert!(
            slave >= 0,
            "open {path:?}: {}",
            std::io::Error::last_os_error()
        );
        let size = libc::winsize {
            ws_row: 40,
            ws_col: 120,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        libc::ioctl(slave, libc::TIOCSWINSZ, &size);
        let master = File::from_raw_fd(master);
        let slave = File::from_raw_fd(slave);
        assert!(master.as_raw_fd() >= 0 && slave.as_raw_fd() >= 0);
        (master, slave, tty)
    }
}
