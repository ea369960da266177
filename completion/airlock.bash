# bash completion for airlock(1)
_airlock() {
    local cur prev words cword
    _init_completion || return
    local commands="init run check-path inspect doctor status quarantine history events publish outbox help version"
    if [[ $cword -eq 1 ]]; then
        COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        return
    fi
    case $prev in
        --root) _filedir -d; return ;;
        --config) _filedir json; return ;;
        --reason)
            COMPREPLY=($(compgen -W "unsafe-path unsupported-entry-type duplicate-path path-conflict name-collision name-too-long too-deep too-many-entries file-too-large total-too-large ratio-too-high corrupt-archive encrypted-entry unsupported-format drop-too-large not-regular-file changed-during-ingest wrong-root-class unknown-class unsupported-schema invalid-field decoder-failed" -- "$cur"))
            return ;;
        --since|--older-than|--id|--uploader|--text|--offset|--limit) return ;;
    esac
    local options="--root --config"
    case ${words[1]} in
        run) options+=" --once" ;;
        doctor|status) options+=" --json" ;;
        history) options+=" --id --since --limit --per-hour --json" ;;
        inspect) _filedir; options="--root --config" ;;
        quarantine)
            if [[ $cword -eq 2 ]]; then
                COMPREPLY=($(compgen -W "list show contents release purge reindex" -- "$cur"))
                return
            fi
            options+=" --json --reason --uploader --since --text --offset --limit --older-than --dry-run" ;;
        outbox)
            if [[ $cword -eq 2 ]]; then
                COMPREPLY=($(compgen -W "sweep" -- "$cur"))
                return
            fi ;;
        init) options="--root --config" ;;
        check-path|help|version) return ;;
    esac
    COMPREPLY+=($(compgen -W "$options" -- "$cur"))
}
complete -F _airlock airlock
