/// Extensions Windows or a desktop runs as code when the file is opened: the
/// union of Outlook's blocked attachment types and Gmail's blocked file types
/// (as Microsoft and Google publish them), plus the Unix shells' and common
/// interpreters' own. Left out: what those lists block only because it is a
/// certificate (.cer .crt .der), a disk image or cabinet (.iso .img .vhd .vhdx
/// .dmg .cab, which are archives when airlock reads them) or a mail store
/// (.pst), and .tmp.
enum ScriptNames {
    static let extensions: Set<[UInt8]> = Set([
        // Outlook
        "ade", "adp", "app", "application", "appref-ms", "asp", "aspx", "asx", "bas", "bat", "bgi", "chm", "cmd", "cnt", "com",
        "cpl", "csh", "diagcab", "exe", "fxp", "gadget", "grp", "hlp", "hpj", "hta", "htc", "inf", "ins", "isp", "its", "jar",
        "jnlp", "js", "jse", "ksh", "lnk", "mad", "maf", "mag", "mam", "maq", "mar", "mas", "mat", "mau", "mav", "maw", "mcf",
        "mda", "mdb", "mde", "mdt", "mdw", "mdz", "msc", "msh", "msh1", "msh2", "mshxml", "msh1xml", "msh2xml", "msi", "msp",
        "mst", "msu", "ops", "osd", "pcd", "pif", "pl", "plg", "prf", "prg", "printerexport", "ps1", "ps1xml", "ps2", "ps2xml",
        "psc1", "psc2", "psd1", "psdm1", "py", "pyc", "pyo", "pyw", "pyz", "pyzw", "reg", "scf", "scr", "sct", "shb", "shs",
        "theme", "url", "vb", "vbe", "vbp", "vbs", "vsmacros", "vsw", "webpnp", "website", "ws", "wsb", "wsc", "wsf", "wsh",
        "xbap", "xll", "xnk",
        // Gmail, beyond the above
        "apk", "appx", "appxbundle", "diagcfg", "diagpack", "dll", "ex", "ex_", "lib", "mjs", "msix", "msixbundle", "nsh",
        "sys", "vxd",
        // Unix shells and interpreters
        "sh", "bash", "zsh", "fish", "rb", "php", "pm", "tcl", "awk", "command", "desktop",
    ].map { Array($0.utf8) })

    /// Whether the last component's extension is on the list. Windows drops
    /// trailing dots and spaces from a name, so `run.bat.` is a batch file.
    static func isScript(_ path: [UInt8]) -> Bool {
        fileExtension(path).map(extensions.contains) ?? false
    }

    /// The last component's extension, lowercased, trailing dots and spaces dropped; nil when it has none.
    static func fileExtension(_ path: [UInt8]) -> [UInt8]? {
        let last = path.split(separator: UInt8(ascii: "/")).last ?? path[...]
        let trimmed = Array(last.reversed().drop { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: " ") }.reversed())
        guard let dot = trimmed.lastIndex(of: UInt8(ascii: ".")), dot != 0 else { return nil }
        return trimmed[(dot + 1)...].map(ByteText.lower)
    }
}

/// Names a browser opens as a page or as markup whatever the file begins
/// with: `page.html` holding `Hi <img src=x onerror=…>` is a page that runs
/// its handler, though its head opens no markup.
enum MarkupNames {
    static let pages: Set<[UInt8]> = Set(["html", "htm", "shtml", "xhtml", "xht"].map { Array($0.utf8) })
    static let markup: Set<[UInt8]> = pages.union(["svg", "xml", "xsl", "xslt"].map { Array($0.utf8) })

    static func isPage(_ path: [UInt8]) -> Bool { ScriptNames.fileExtension(path).map(pages.contains) ?? false }

    static func isMarkup(_ path: [UInt8]) -> Bool { ScriptNames.fileExtension(path).map(markup.contains) ?? false }
}
