import AirlockEvents
import AirlockPolicy

/// The airlock.json key behind each quota reason, named in the rejection's
/// detail so that whoever reads a report knows which limit to raise.
enum QuotaKeys {
    /// The key (or keys) that set the limit `rejection` ran into; nil for a
    /// reason that is not a quota.
    static func keys(for rejection: Rejection) -> String? {
        let keyed = rejection.format == "keyed" || rejection.detail.contains("keyed") || rejection.detail.contains("memos")
        switch rejection.reason {
        case .dropTooLarge: return keyed ? "keyed.max_bytes" : "policy.max_drop_bytes"
        case .fileTooLarge: return "policy.max_file_bytes"
        case .totalTooLarge: return "policy.max_total_bytes"
        case .tooManyEntries: return keyed ? "keyed.max_items" : "policy.max_entries"
        case .ratioTooHigh: return "policy.max_ratio (for entries over policy.ratio_min_bytes)"
        case .tooDeep: return "policy.max_depth"
        case .nameTooLong: return rejection.detail.contains("component") ? "policy.max_component_bytes" : "policy.max_path_bytes"
        default: return nil
        }
    }

    /// `verdict` with the key named at the end of a quota rejection's detail.
    static func annotate(_ verdict: DropOutcome.Verdict) -> DropOutcome.Verdict {
        guard case .rejected(var rejection) = verdict, let keys = keys(for: rejection),
              !rejection.detail.contains(keys) else { return verdict }
        rejection.detail += " (the limit is \(keys) in airlock.json)"
        return .rejected(rejection)
    }
}
