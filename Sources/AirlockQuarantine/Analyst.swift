import AirlockSystem

/// Who is acting on the quarantine, and what their groups let them do.
///
/// Analysts reach the service's root through the sudo rule airlock ships
/// (`sudo -u airlock airlock quarantine …`): the process then runs as the
/// service user, and the person is the one sudo names in `SUDO_USER` and
/// `SUDO_UID`. Those variables are believed only when the real uid is the
/// root's owner or the superuser, identities an analyst can only take through
/// sudo (which sets them itself, whatever the caller's environment held), and
/// only when the password database gives `SUDO_UID` the name `SUDO_USER`.
/// Anyone else is who their real uid says. An analyst who came through sudo as
/// the service user has the rights of their groups; the superuser (through sudo
/// or not) and the service user acting as itself have every right, and only the
/// name recorded changes.
public struct Analyst: Sendable, Equatable {
    /// The group whose members may list, show, read contents and history.
    public static let viewerGroup = "airlock-view"
    /// The group whose members may also release and purge.
    public static let reviewerGroup = "airlock-review"

    /// The person's user name (escaped as every name airlock records), or `uid N`.
    public let name: String
    public let uid: UInt32
    /// Set when the person came through sudo as the root's owner: their rights are their groups'.
    public let throughSudo: Bool

    public init(name: String, uid: UInt32, throughSudo: Bool) {
        self.name = name
        self.uid = uid
        self.throughSudo = throughSudo
    }

    /// The person behind this process, for a root owned by `rootOwner` (nil when
    /// there is no root to look at).
    public static func current(rootOwner: UInt32?) -> Analyst {
        let real = Accounts.realUserID
        let own = Analyst(name: userName(of: real) ?? "uid \(real)", uid: real, throughSudo: false)
        // An unknown owner (no such root yet) is taken as the service's: the person is held to their groups.
        guard real == 0 || real == rootOwner || rootOwner == nil,
              let uidText = CurrentProcess.environment("SUDO_UID"), let uid = UInt32(uidText), uid != real,
              let claimed = CurrentProcess.environment("SUDO_USER"), let account = Accounts.user(uid),
              account.name == claimed else { return own }
        return Analyst(name: userName(of: uid) ?? claimed, uid: uid, throughSudo: real != 0)
    }

    /// Whether this person may release and purge: anyone acting as themselves
    /// (the service user, the superuser, or whoever else can open the root), and
    /// a member of `reviewerGroup` through sudo.
    public var mayReview: Bool { !throughSudo || isMember(of: Analyst.reviewerGroup) }

    /// Whether this person may look at the quarantine: as `mayReview`, or a
    /// member of `viewerGroup` through sudo.
    public var mayView: Bool { mayReview || isMember(of: Analyst.viewerGroup) }

    private func isMember(of groupName: String) -> Bool {
        guard let group = Accounts.group(named: groupName), let account = Accounts.user(uid) else { return false }
        return Accounts.isMember(account.name, primary: account.group, of: group)
    }

    /// Why this person may not release or purge, for the refusal (exit status 77).
    public var reviewRefusal: String {
        "\(name) may not release or purge quarantine entries: that is for members of the group \(Analyst.reviewerGroup)"
            + (mayView ? " (as a member of \(Analyst.viewerGroup), \(name) may list, show, read contents and history)" : "")
    }

    /// Why this person may not look at the quarantine at all.
    public var viewRefusal: String {
        "\(name) may not review the quarantine: add them to \(Analyst.viewerGroup) (to look) or \(Analyst.reviewerGroup) (to release and purge too)"
    }
}
