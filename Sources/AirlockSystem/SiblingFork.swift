#if canImport(Glibc)
import Glibc
#endif
import CAirlockShims

/// Which side of a `SiblingFork.fork()` the caller is on.
public enum ForkSide: Sendable {
    /// The process that forked: the new child's pid and its pidfd (close-on-exec, the caller's to close).
    case parent(pid: Int32, pidfd: FileDescriptor)
    /// The new child.
    case child
}

/// Forking a child that is the caller's sibling: a child of the caller's own
/// parent, which waits for it, reads its resource usage and kills it through
/// the pidfd that comes back here, as it does for a child it spawned itself.
public enum SiblingFork {
    /// clone3(2) (or clone(2) where clone3 is refused) with CLONE_PARENT | CLONE_PIDFD.
    ///
    /// Only a single-threaded process may call this: the child is a copy of the
    /// calling thread alone, and a lock another thread held at the fork would stay
    /// held in it forever. glibc's fork handlers do not run; what the child relies
    /// on from glibc after a bare clone is what a single-threaded copy keeps (its
    /// own signals to itself go through gettid, not a cached thread id).
    /// - Throws: `clone3` with the errno (EINVAL from a process that may not have siblings, such as init).
    public static func fork() throws(SystemError) -> ForkSide {
        var pidfd: Int32 = -1
        let pid = try retrying("clone3(CLONE_PARENT|CLONE_PIDFD)") { airlock_fork_sibling(&pidfd) }
        return pid == 0 ? .child : .parent(pid: pid, pidfd: FileDescriptor(rawValue: pidfd))
    }

    /// malloc_trim(3): returns the heap's free pages to the kernel before children
    /// are forked, so that they neither copy those pages on write nor unmap them at exit.
    public static func trimHeap() {
        _ = airlock_trim_heap()
    }

    /// The whole file at `path` in anonymous memory that children forked later
    /// share without a page fault (aligned and advised for huge pages, so the
    /// fork copies few page-table entries). Never released: it lives as long as
    /// the process, as a template's loaded data does.
    /// - Throws: `read` with the path, and the errno of open, fstat, mmap or read.
    public static func readShared(_ path: String) throws(SystemError) -> UnsafeRawBufferPointer {
        var length = 0
        guard let start = airlock_read_file_anonymous(path, &length) else {
            throw SystemError("read", Array(path.utf8), Errno.current)
        }
        return UnsafeRawBufferPointer(start: start, count: length)
    }

    /// How many threads this process has, from /proc/self/stat.
    public static func threadCount() throws(SystemError) -> Int {
        Int(try retrying("read /proc/self/stat") { airlock_thread_count() })
    }
}

extension ChildProcess {
    /// Takes ownership of `pidfd`, a pidfd for `pid`, which is a child of this
    /// process (forked as a sibling by one of its children) not yet waited for.
    public static func adopting(pidfd: FileDescriptor, pid: Int32) -> ChildProcess {
        ChildProcess(pid: pid, pidfd: pidfd.rawValue)
    }
}
