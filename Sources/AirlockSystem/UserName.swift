import AirlockText
#if canImport(Glibc)
import Glibc
#endif

/// The user name the password database gives a uid, with getpwuid_r(3); nil when
/// it has none or cannot be read. Reports and events record who uploaded a drop
/// by uid and by the name it had at that moment, since a uid may be reused later.
public func userName(of uid: UInt32) -> String? {
    var entry = passwd()
    var found: UnsafeMutablePointer<passwd>?
    var capacity = 1024
    // ERANGE asks for a larger buffer; other errors and "no such user" give nil.
    while capacity <= 1 << 20 {
        var buffer = [CChar](repeating: 0, count: capacity)
        let status = getpwuid_r(uid_t(uid), &entry, &buffer, capacity, &found)
        if status == ERANGE {
            capacity *= 4
            continue
        }
        guard status == 0, found != nil, let name = entry.pw_name else { return nil }
        let bytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self), count: strlen(name)))
        return EscapedName(bytes).text
    }
    return nil
}

/// Whether standard error is connected to the systemd journal: `JOURNAL_STREAM`
/// names the device and inode of the stream systemd connected, and it only counts
/// when they are still standard error's (a child whose stderr was redirected keeps
/// the variable but not the stream). See systemd.exec(5), `$JOURNAL_STREAM`.
public func standardErrorIsJournal() -> Bool {
    guard let value = getenv("JOURNAL_STREAM") else { return false }
    let parts = String(cString: value).split(separator: ":")
    guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
    var st = stat()
    guard fstat(2, &st) == 0 else { return false }
    return UInt64(st.st_dev) == device && UInt64(st.st_ino) == inode
}
