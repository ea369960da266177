import AirlockConfiguration
import AirlockEvents
import AirlockPolicy

/// The airlock.json key behind each quota reason, named in the rejection's
/// detail so that whoever reads a report knows which limit to raise.
enum QuotaKeys {
    /// The key (or keys) that set the limit `rejection` ran into; nil for a
    /// reason that is not a quota.
    static func keys(for rejection: Rejection) -> String? {
        let keyed = rejection.format == "keyed" || rejection.detail.contains("keyed") || rejection.detail.contains("memos")
        let setting: NumericSetting
        switch rejection.reason {
        case .dropTooLarge: setting = keyed ? .keyedMaxBytes : .maxDropBytes
        case .fileTooLarge: setting = .maxFileBytes
        case .totalTooLarge: setting = .maxTotalBytes
        case .tooManyEntries: setting = keyed ? .keyedMaxItems : .maxEntries
        case .ratioTooHigh: return "\(NumericSetting.maxRatio.name) (for entries over \(NumericSetting.ratioMinBytes.name))"
        case .tooDeep: setting = .maxDepth
        case .nameTooLong: setting = rejection.detail.contains("component") ? .maxComponentBytes : .maxPathBytes
        default: return nil
        }
        return setting.name
    }

    /// `verdict` with the key named at the end of a quota rejection's detail.
    static func annotate(_ verdict: DropOutcome.Verdict) -> DropOutcome.Verdict {
        guard case .rejected(var rejection) = verdict, let keys = keys(for: rejection),
              !rejection.detail.contains(keys) else { return verdict }
        rejection.detail += " (the limit is \(keys) in airlock.json)"
        return .rejected(rejection)
    }
}
