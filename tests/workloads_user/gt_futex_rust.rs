// gt_futex_rust: Rust std's waits, which block in futex system calls made
// through libc's syscall(), each with one culprit that makes three threads
// wait; built the way users build (rustc -O -g). One scenario per run:
//
//   mutex    slow_holder holds a std::sync::Mutex, computing; 3 threads
//            lock it (and unlock it, one after the other: waiter_mutex)
//   condvar  3 threads wait on a Condvar for a flag; slow_signaller
//            computes, then sets it and notifies all
//   rwlock   rwlock::slow_holder holds a RwLock for writing, computing; 3 threads
//            read it
//   barrier  3 threads wait at a Barrier; slow_straggler computes, then
//            arrives last
//   mpsc     3 threads recv on a channel each; slow_sender computes,
//            then sends on each
//
// The log and its meaning are those of futex_gt.h (the C and C++
// workloads' header), written here in Rust: a wait spans from the
// waiter's entry into futex (its note before the blocking call, plus the
// CPU time and run delay it had until the culprit saw it blocked there)
// to the return of the blocking call; a wake is logged with its function
// just before the call that makes it and again when that call returns
// (the span within which lockblame accounts it). A waiter's
// own wake is logged only where it wakes the word the others wait on (a
// Mutex's): after a Condvar's or a Barrier's notify_all, what the woken
// waiters still wait is on the condvar's word, which no later wake ends
// (unattributed, both in the truth and in lockblame).
// tests/lib/futex_truth.py turns the log into the ground truth.
//
// Usage: gt_futex_rust SCENARIO [HOLD_MS]   (HOLD_MS default 150)
use std::env;
use std::fs;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicUsize, Ordering::SeqCst};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Condvar, Mutex, RwLock};
use std::thread;

const WAITERS: usize = 3;
const SIGNALS: usize = 16;

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    fn gettid() -> i32;
}

fn clock_ns(clock: i32) -> i64 {
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { clock_gettime(clock, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

fn now_ns() -> i64 {
    clock_ns(1 /* CLOCK_MONOTONIC */)
}

fn spin_until(t: i64) {
    while now_ns() < t {}
}

const ZERO32: AtomicI32 = AtomicI32::new(0);
const ZERO64: AtomicI64 = AtomicI64::new(0);
const ZERO: AtomicUsize = AtomicUsize::new(0);
static TID: [AtomicI32; WAITERS] = [ZERO32; WAITERS];
static NOTED: [AtomicI64; WAITERS] = [ZERO64; WAITERS];
static NOTED_CPU: [AtomicI64; WAITERS] = [ZERO64; WAITERS];
static NOTED_DELAY: [AtomicI64; WAITERS] = [ZERO64; WAITERS];
static BLOCKED: [AtomicI64; WAITERS] = [ZERO64; WAITERS];
static RETURNED: [AtomicI64; WAITERS] = [ZERO64; WAITERS];
static SIGNAL_NS: [AtomicI64; SIGNALS] = [ZERO64; SIGNALS];
static SIGNALLED_NS: [AtomicI64; SIGNALS] = [ZERO64; SIGNALS];
static SIGNAL_SITE: [AtomicUsize; SIGNALS] = [ZERO; SIGNALS];
static NSIGNALS: AtomicUsize = AtomicUsize::new(0);
static HELD: AtomicBool = AtomicBool::new(false);
static DONE: AtomicUsize = AtomicUsize::new(0);
static HOLD_NS: AtomicI64 = AtomicI64::new(150_000_000);
// The wake sites, by the functions' paths as the report names them.
const SITES: [&str; 6] = [
    "gt_futex_rust::slow_holder",
    "gt_futex_rust::rwlock::slow_holder",
    "gt_futex_rust::slow_signaller",
    "gt_futex_rust::slow_sender",
    "gt_futex_rust::slow_straggler",
    "gt_futex_rust::waiter_mutex",
];
const SLOW_HOLDER: usize = 0;
const RW_SLOW_HOLDER: usize = 1;
const SLOW_SIGNALLER: usize = 2;
const SLOW_SENDER: usize = 3;
const SLOW_STRAGGLER: usize = 4;
const WAITER_MUTEX: usize = 5;

// A thread at site, just before its wake call; returns the wake's slot,
// for signalled.
fn signal(site: usize) -> usize {
    let n = NSIGNALS.fetch_add(1, SeqCst);
    if n < SIGNALS {
        SIGNAL_NS[n].store(now_ns(), SeqCst);
        SIGNAL_SITE[n].store(site, SeqCst);
    }
    n
}

// The same thread, once the wake call of slot (signal's) returned.
fn signalled(slot: usize) {
    if slot < SIGNALS {
        SIGNALLED_NS[slot].store(now_ns(), SeqCst);
    }
}

fn in_futex(tid: i32) -> bool {
    let path = format!("/proc/self/task/{}/syscall", tid);
    fs::read_to_string(&path).expect(&path).starts_with("202 ")
}

// The culprit: returns once every waiter is blocked in futex, the time
// each entered it noted.
// The waiters arrive only once the culprit runs (HELD), so it watches them
// from the start.
fn await_blocked() {
    let mut seen = 0;
    while seen < WAITERS {
        for i in 0..WAITERS {
            let tid = TID[i].load(SeqCst);
            if BLOCKED[i].load(SeqCst) == 0 && tid != 0 && in_futex(tid) {
                // it has not slept since its note: it entered futex that
                // much running and runnable time after it
                let (cpu, delay) = schedstat(tid);
                let entered = NOTED[i].load(SeqCst)
                    + (cpu - NOTED_CPU[i].load(SeqCst))
                    + (delay - NOTED_DELAY[i].load(SeqCst));
                BLOCKED[i].store(entered, SeqCst);
                seen += 1;
            }
        }
        if seen < WAITERS {
            thread::yield_now();
        }
    }
}

fn hold() {
    spin_until(now_ns() + HOLD_NS.load(SeqCst));
}

// Waiter i, about to block (after the culprit holds, where it must).
// It notes its time, CPU time and run delay first (futex_gt.h).
fn arrive(i: usize) {
    while !HELD.load(SeqCst) {
        thread::yield_now();
    }
    let tid = unsafe { gettid() };
    NOTED_DELAY[i].store(schedstat(tid).1, SeqCst);
    NOTED_CPU[i].store(clock_ns(3 /* CLOCK_THREAD_CPUTIME_ID */), SeqCst);
    NOTED[i].store(now_ns(), SeqCst);
    TID[i].store(tid, SeqCst);
}

// Thread tid's CPU time and run delay in ns (/proc schedstat).
fn schedstat(tid: i32) -> (i64, i64) {
    let path = format!("/proc/self/task/{}/schedstat", tid);
    let text = fs::read_to_string(&path).unwrap_or_default();
    let mut fields = text
        .split_whitespace()
        .map(|f| f.parse::<i64>().unwrap_or(0));
    (fields.next().unwrap_or(0), fields.next().unwrap_or(0))
}

// Waiter i, back from its blocking call.
fn returned(i: usize) {
    RETURNED[i].store(now_ns(), SeqCst);
}

// Then it lives on for half the culprit's time (a thread that ends right
// after its only wait would be parked until shutdown, a structural wait),
// asleep: the threads woken with it need the CPUs; that long however late
// it comes here (futex_gt.h's fgt_linger says why).
fn linger() {
    thread::sleep(std::time::Duration::from_nanos(
        HOLD_NS.load(SeqCst) as u64 / 2,
    ));
}

#[inline(never)]
fn slow_holder(m: &Mutex<u64>) {
    let mut guard = m.lock().unwrap();
    HELD.store(true, SeqCst);
    await_blocked();
    hold();
    *guard += 1;
    let wake = signal(SLOW_HOLDER);
    drop(guard);
    signalled(wake);
    DONE.fetch_add(1, SeqCst); // (the unlock is no tail call)
}

mod rwlock {
    use super::*;

    #[inline(never)]
    pub fn slow_holder(rw: &RwLock<u64>) {
        let mut guard = rw.write().unwrap();
        HELD.store(true, SeqCst);
        await_blocked();
        hold();
        *guard += 1;
        let wake = signal(RW_SLOW_HOLDER);
        drop(guard);
        signalled(wake);
        DONE.fetch_add(1, SeqCst);
    }
}

#[inline(never)]
fn slow_signaller(pair: &(Mutex<bool>, Condvar)) {
    HELD.store(true, SeqCst);
    await_blocked();
    hold();
    *pair.0.lock().unwrap() = true;
    // notified after the unlock: the woken waiters find the mutex free
    let wake = signal(SLOW_SIGNALLER);
    pair.1.notify_all();
    signalled(wake);
    DONE.fetch_add(1, SeqCst);
}

#[inline(never)]
fn slow_sender(senders: Vec<mpsc::Sender<u64>>) {
    HELD.store(true, SeqCst);
    await_blocked();
    hold();
    for tx in &senders {
        let wake = signal(SLOW_SENDER);
        tx.send(1).unwrap();
        signalled(wake);
    }
    DONE.fetch_add(1, SeqCst);
}

#[inline(never)]
fn slow_straggler(barrier: &Barrier) {
    HELD.store(true, SeqCst);
    await_blocked();
    hold();
    let wake = signal(SLOW_STRAGGLER);
    barrier.wait();
    signalled(wake);
    DONE.fetch_add(1, SeqCst);
}

#[inline(never)]
fn waiter_mutex(i: usize, m: &Mutex<u64>) {
    arrive(i);
    let mut guard = m.lock().unwrap();
    returned(i);
    *guard += 1;
    let wake = signal(WAITER_MUTEX);
    drop(guard);
    signalled(wake);
    linger();
}

#[inline(never)]
fn waiter_condvar(i: usize, pair: &(Mutex<bool>, Condvar)) {
    arrive(i);
    let mut ready = pair.0.lock().unwrap();
    while !*ready {
        ready = pair.1.wait(ready).unwrap();
    }
    returned(i);
    drop(ready);
    linger();
}

#[inline(never)]
fn waiter_rwlock(i: usize, rw: &RwLock<u64>) {
    arrive(i);
    let guard = rw.read().unwrap();
    returned(i);
    DONE.fetch_add(*guard as usize, SeqCst);
    drop(guard);
    linger();
}

#[inline(never)]
fn waiter_barrier(i: usize, barrier: &Barrier) {
    arrive(i);
    barrier.wait();
    returned(i);
    linger();
}

#[inline(never)]
fn waiter_recv(i: usize, rx: mpsc::Receiver<u64>) {
    arrive(i);
    let got = rx.recv().unwrap();
    returned(i);
    DONE.fetch_add(got as usize, SeqCst);
    linger();
}

fn usage(prog: &str) -> ! {
    eprintln!(
        "usage: {} mutex|condvar|rwlock|barrier|mpsc [HOLD_MS]",
        prog
    );
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = env::args().collect();
    if args.len() < 2 {
        usage(&args[0]);
    }
    if args.len() > 2 {
        let ms: i64 = args[2].parse().unwrap_or_else(|_| usage(&args[0]));
        HOLD_NS.store(ms * 1_000_000, SeqCst);
    }
    let start = now_ns();
    let mut threads = Vec::new();
    match args[1].as_str() {
        "mutex" => {
            let m = Arc::new(Mutex::new(0u64));
            let h = m.clone();
            threads.push(thread::spawn(move || slow_holder(&h)));
            for i in 0..WAITERS {
                let m = m.clone();
                threads.push(thread::spawn(move || waiter_mutex(i, &m)));
            }
        }
        "condvar" => {
            let pair = Arc::new((Mutex::new(false), Condvar::new()));
            for i in 0..WAITERS {
                let p = pair.clone();
                threads.push(thread::spawn(move || waiter_condvar(i, &p)));
            }
            threads.push(thread::spawn(move || slow_signaller(&pair)));
        }
        "rwlock" => {
            let rw = Arc::new(RwLock::new(0u64));
            let h = rw.clone();
            threads.push(thread::spawn(move || rwlock::slow_holder(&h)));
            for i in 0..WAITERS {
                let rw = rw.clone();
                threads.push(thread::spawn(move || waiter_rwlock(i, &rw)));
            }
        }
        "barrier" => {
            let barrier = Arc::new(Barrier::new(WAITERS + 1));
            for i in 0..WAITERS {
                let b = barrier.clone();
                threads.push(thread::spawn(move || waiter_barrier(i, &b)));
            }
            threads.push(thread::spawn(move || slow_straggler(&barrier)));
        }
        "mpsc" => {
            let mut senders = Vec::new();
            for i in 0..WAITERS {
                let (tx, rx) = mpsc::channel();
                senders.push(tx);
                threads.push(thread::spawn(move || waiter_recv(i, rx)));
            }
            threads.push(thread::spawn(move || slow_sender(senders)));
        }
        _ => usage(&args[0]),
    }
    for t in threads {
        t.join().unwrap();
    }
    let duration_s = (now_ns() - start) as f64 / 1e9;
    let mut log = String::new();
    log += &format!(
        "workload gt_futex_rust\nsource gt_futex_rust.rs\nthreads {}\n",
        WAITERS + 1
    );
    log += &format!("duration_s {:.6}\n", duration_s);
    for i in 0..WAITERS {
        log += &format!(
            "wait {} {}\n",
            BLOCKED[i].load(SeqCst),
            RETURNED[i].load(SeqCst)
        );
    }
    for s in 0..NSIGNALS.load(SeqCst).min(SIGNALS) {
        let site = SITES[SIGNAL_SITE[s].load(SeqCst)];
        log += &format!(
            "signal {} {} {}\n",
            SIGNAL_NS[s].load(SeqCst),
            SIGNALLED_NS[s].load(SeqCst),
            site
        );
    }
    match env::var("EVENTS") {
        Ok(path) if !path.is_empty() => fs::write(&path, log).expect(&path),
        _ => std::io::stdout().write_all(log.as_bytes()).unwrap(),
    }
}
