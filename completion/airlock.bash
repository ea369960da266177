# bash completion for airlock(1), generated from its command table by `airlock help --completion`
# (make docs): edit the table, not this file.
_airlock() {
    local cur prev words cword
    _init_completion || return
    local commands="init run check-path inspect doctor quarantine history status events publish outbox help version"
    if [[ $cword -eq 1 ]]; then
        COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        return
    fi
    case $prev in
        --root) _filedir -d; return ;;
        --config) _filedir json; return ;;
        --reason)
            COMPREPLY=($(compgen -W "unsafe-path unsupported-entry-type duplicate-path path-conflict name-collision name-too-long too-deep too-many-entries file-too-large total-too-large ratio-too-high corrupt-archive encrypted-entry unsupported-format drop-too-large not-regular-file changed-during-ingest wrong-root-class unknown-class unsupported-schema invalid-field decoder-failed unreadable-drop disallowed-type type-mismatch malware-found" -- "$cur"))
            return ;;
        --instance|--uploader|--since|--text|--offset|--limit|--older-than|--id|--after) return ;;
    esac
    local options
    case ${words[1]} in
        init)
            options="--root --config" ;;
        run)
            options="--once --instance --root --config" ;;
        check-path)
            options="" ;;
        inspect)
            _filedir
            options="--root --config" ;;
        doctor)
            options="--json --root --config" ;;
        quarantine)
            if [[ $cword -eq 2 ]]; then
                COMPREPLY=($(compgen -W "list show contents release purge reindex" -- "$cur"))
                return
            fi
            options="--reason --uploader --since --text --offset --limit --json --older-than --dry-run --root --config" ;;
        history)
            options="--id --since --limit --per-hour --json --root --config" ;;
        status)
            options="--json --root --config" ;;
        events)
            options="--follow --after --root --config" ;;
        publish)
            options="--root --config" ;;
        outbox)
            if [[ $cword -eq 2 ]]; then
                COMPREPLY=($(compgen -W "sweep" -- "$cur"))
                return
            fi
            options="--root --config" ;;
        help)
            [[ $cword -eq 2 ]] && COMPREPLY=($(compgen -W "$commands" -- "$cur"))
            options="" ;;
        version)
            options="" ;;
        *) return ;;
    esac
    COMPREPLY+=($(compgen -W "$options" -- "$cur"))
}
complete -F _airlock airlock
