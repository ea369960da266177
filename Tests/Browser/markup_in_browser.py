#!/usr/bin/env python3
"""Active markup as Chromium runs it, against airlock's active-content class.

Each case is a file a browser opens by itself: SVG, XML and HTML, in UTF-8 and
UTF-16, with script hidden the ways a browser still finds it (character
references, namespace prefixes, entities a DOCTYPE declares, srcdoc,
ISO-2022-JP's switches, a data: URL's page in an iframe or object, an XSLT stylesheet instruction). Its
payload writes a marker to the console; a link with id "go" is clicked. Headless
Chromium says whether the script ran, and `airlock inspect` under a profile that
denies active-content says whether the file is refused. For every case:

- a case that runs in Chromium must be refused as disallowed-type;
- whether it runs must be what the case says, so that a browser that runs
  nothing cannot pass the check (and a case that stopped running is seen);
- the clean cases neither run nor are refused.

A case airlock refuses that Chromium does not run (it reads more cautiously
than one browser) is allowed and listed. Debian's python3 (/usr/bin/python3),
where python3-selenium is installed; needs no root. Exit status 0 only when
every check passed.
"""
import argparse, base64, json, os, subprocess, sys, tempfile, time, zipfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

MARK = "airlock-markup-ran"
RUN = f"console.log('{MARK}')"
SVG = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="100" height="100"'
BOX = '<rect width="100" height="100"/>'


def link(href, declarations=""):
    doctype = f'<?xml version="1.0"?>\n<!DOCTYPE svg [\n{declarations}\n]>\n' if declarations else ""
    return (doctype + f'<svg {SVG}><a id="go" xlink:href="{href}">{BOX}</a></svg>').encode()


# (file name, bytes, whether Chromium runs it). Every file that runs must be refused.
CASES = [
    ("onload.svg", f'<svg {SVG} onload="{RUN}">{BOX}</svg>'.encode(), True),
    ("script.svg", f'<svg {SVG}><script>{RUN}</script></svg>'.encode(), True),
    ("link.svg", link(f"javascript:{RUN}"), True),
    ("link-references.svg", link(f"javascr&#x69;pt&#0000000058;{RUN}"), True),
    ("link-tab-reference.svg", link(f"java&#9;script:{RUN}"), True),
    # XML turns a literal tab in an attribute into a space, which ends the scheme.
    ("link-literal-tab.svg", link(f"java\tscript:{RUN}"), False),
    ("prefixed-script.svg", f'<svg {SVG} xmlns:h="http://www.w3.org/1999/xhtml"><h:script>{RUN}</h:script></svg>'.encode(), True),
    ("srcdoc.svg", (f'<svg {SVG}><foreignObject width="100" height="100"><iframe xmlns="http://www.w3.org/1999/xhtml" '
                    f'srcdoc="&lt;script&gt;{RUN}&lt;/script&gt;"/></foreignObject></svg>').encode(), True),
    ("entity-link.svg", link(f"&a;&b;:{RUN}", '<!ENTITY a "java">\n<!ENTITY b "script">'), True),
    ("entity-markup.svg", (f'<?xml version="1.0"?>\n<!DOCTYPE svg [\n<!ENTITY s "&#60;script&#62;{RUN}&#60;/script&#62;">\n]>\n'
                           f'<svg {SVG}>&s;</svg>').encode(), True),
    ("utf16-mark.svg", b"\xff\xfe" + f'<svg {SVG} onload="{RUN}">{BOX}</svg>'.encode("utf-16-le"), True),
    ("utf16-declaration.svg", f'<?xml version="1.0" encoding="UTF-16"?><svg {SVG} onload="{RUN}">{BOX}</svg>'.encode("utf-16-le"), True),
    ("utf16-mark.html", b"\xfe\xff" + f"<p>x</p><script>{RUN}</script>".encode("utf-16-be"), True),
    ("iso2022-handler.svg", b'<?xml version="1.0" encoding="ISO-2022-JP"?>\n<svg ' + SVG.encode() + b' onl\x1b(Boad="'
     + RUN.encode() + b'">' + BOX.encode() + b"</svg>", True),
    ("iso2022-script.svg", b'<?xml version="1.0" encoding="ISO-2022-JP"?>\n<svg ' + SVG.encode() + b"><scr\x1b(Jipt>"
     + RUN.encode() + b"</script></svg>", True),
    ("iframe-data-html.svg", (f'<svg {SVG}><foreignObject width="100" height="100"><iframe xmlns="http://www.w3.org/1999/xhtml" '
                              f'src="data:text/html;base64,{base64.b64encode(f"<script>{RUN}</script>".encode()).decode()}"/>'
                              "</foreignObject></svg>").encode(), True),
    ("object-data-svg.svg", (f'<svg {SVG}><foreignObject width="100" height="100"><object xmlns="http://www.w3.org/1999/xhtml" '
                             f'data="data:image/svg+xml;base64,{base64.b64encode(f"<svg xmlns={chr(39)}http://www.w3.org/2000/svg{chr(39)} onload={chr(34)}{RUN}{chr(34)}/>".encode()).decode()}"/>'
                             "</foreignObject></svg>").encode(), True),
    # The stylesheet (style.xsl, beside it) builds a script element by name.
    ("xslt.xml", b'<?xml version="1.0"?>\n<?xml-stylesheet type="text/xsl" href="style.xsl"?>\n<doc>hello</doc>\n', True),
    # A page by its name, its head text: Chromium opens it as HTML.
    ("greeting.html", f'Hi <img src=x onerror="{RUN}">'.encode(), True),
    ("html-references.html", f'<!DOCTYPE html><a id="go" href="java&Tab;script&colon;{RUN}">x</a>'.encode(), True),
]
# Written beside the cases; not judged themselves.
BESIDE = {
    "style.xsl": ('<?xml version="1.0"?>\n<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">'
                  '<xsl:template match="/"><html><body><xsl:element name="{concat(\'scr\', \'ipt\')}">'
                  f"{RUN}</xsl:element></body></html></xsl:template></xsl:stylesheet>\n").encode(),
    "style.css": b"doc { color: black }\n",
}
CLEAN = [
    ("plain.svg", f"<svg {SVG}>{BOX}</svg>".encode()),
    ("references.svg", link("https://example.org/?a=1&amp;b=2").replace(b"</svg>", b"<text>Note&#160;: 12:30 &lt;b&gt;</text></svg>")),
    ("declared.svg", link("https://example.org/", '<!ENTITY ns "http://example.org/ns/">').replace(b"<svg ", b'<svg xmlns:x="&ns;" ')),
    # An image's SVG runs no script.
    ("image-data-svg.svg", (f'<svg {SVG}><image width="10" height="10" href="data:image/svg+xml;base64,'
                            f'{base64.b64encode(f"<svg xmlns={chr(39)}http://www.w3.org/2000/svg{chr(39)} onload={chr(34)}{RUN}{chr(34)}/>".encode()).decode()}"/></svg>').encode()),
    # The same bytes named .txt: shown as text.
    ("greeting.txt", f'Hi <img src=x onerror="{RUN}">'.encode()),
    ("css.xml", b'<?xml version="1.0"?>\n<?xml-stylesheet type="text/css" href="style.css"?>\n<doc>hello</doc>\n'),
    ("utf16-text.svg", b"\xff\xfe" + f"<svg {SVG}><text>été, 日本</text></svg>".encode("utf-16-le")),
]


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # File access from files: the XSLT case's page loads its stylesheet beside it.
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--allow-file-access-from-files"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def runs(driver, path):
    driver.get_log("browser")
    driver.get("file://" + path)
    time.sleep(0.4)
    driver.execute_script("var go = document.getElementById('go');"
                          "if (go) go.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true, view: window}));")
    time.sleep(0.4)
    return any(MARK in entry["message"] for entry in driver.get_log("browser"))


def verdict(airlock, root, directory, name, data):
    archive = os.path.join(directory, name + ".zip")
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr(name, data)
    result = subprocess.run([airlock, "inspect", archive, "--root", root], capture_output=True, text=True)
    event = json.loads(result.stdout.strip().splitlines()[-1])
    return event.get("verdict"), event.get("reason")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--airlock", default=".build/debug/airlock")
    arguments = parser.parse_args()
    airlock = os.path.abspath(arguments.airlock)
    failures, cautious = [], []
    with tempfile.TemporaryDirectory(prefix="airlock-browser-") as directory:
        root = os.path.join(directory, "root")
        subprocess.run([airlock, "init", "--root", root], check=True, capture_output=True)
        settings_path = os.path.join(root, "airlock.json")
        with open(settings_path) as file:
            settings = json.load(file)
        settings.setdefault("content", {})["deny_classes"] = ["active-content"]
        with open(settings_path, "w") as file:
            json.dump(settings, file, indent=2)
        for name, data in BESIDE.items():
            with open(os.path.join(directory, name), "wb") as file:
                file.write(data)
        driver = browser()
        try:
            for name, data, expected in [(n, d, e) for n, d, e in CASES] + [(n, d, None) for n, d in CLEAN]:
                path = os.path.join(directory, name)
                with open(path, "wb") as file:
                    file.write(data)
                ran = runs(driver, path)
                outcome = verdict(airlock, root, directory, name, data)
                refused = outcome == ("rejected", "disallowed-type")
                line = f"{name:26} chromium {'runs' if ran else 'no':5} airlock {outcome[0]} {outcome[1] or ''}"
                print(line)
                if expected is not None and ran != expected:
                    failures.append(f"{name}: Chromium {'ran' if ran else 'did not run'} it, the case says otherwise")
                if ran and not refused:
                    failures.append(f"{name}: runs in Chromium and airlock does not refuse it")
                if expected is None and (ran or refused):
                    failures.append(f"{name}: a clean case {'runs' if ran else 'is refused'}")
                if refused and not ran and expected is not None:
                    cautious.append(name)
        finally:
            driver.quit()
    if cautious:
        print("refused though Chromium does not run them: " + ", ".join(cautious))
    for failure in failures:
        print("FAIL " + failure)
    print(f"{len(CASES) + len(CLEAN)} files, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
