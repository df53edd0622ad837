//! `cargo xtask docs` builds svclab's guide (`docs/guide/*.md`, in the order of `SUMMARY.md`)
//! into static pages under `<target>/guide/`, without mdBook (a static generator over
//! pulldown-cmark compiles in seconds on two cores).
//!
//! Every ```` ```svclab <command> ```` block and the ```` ```text expected ```` block after it
//! (the syntax `svclab doc test` checks) becomes one `<svclab-example>` element that already holds
//! the scenario, the checked output (what readers without JavaScript see) and the playground's
//! share link; the element then renders the live result in the same space. The element and the
//! engine come from the npm package (`cargo xtask npm`), copied under `guide/svclab/`.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, bail, ensure};
use pulldown_cmark::{CodeBlockKind, CowStr, Event, Options, Parser, Tag, TagEnd};

use crate::files::find_files;
use crate::gzip::gzip;
use crate::workspace::{say, target_dir, workspace_root};

/// The guide's pages are served at `/guide/`, the playground at `/`.
const PLAYGROUND: &str = "../";

/// What `show=` may name (the element's views).
const VIEWS: [&str; 5] = ["diagnostics", "allocations", "iptables", "nftables", "trace"];

/// One page of `SUMMARY.md`.
struct Page {
    title: String,
    source: String,
}

/// Where the guide is written.
pub(crate) fn guide_dir() -> PathBuf {
    target_dir(&workspace_root()).join("guide")
}

/// `cargo xtask docs`.
pub(crate) fn build() -> anyhow::Result<()> {
    crate::npm::build()?;
    render()
}

/// The guide around the npm package already in `npm::package_dir()` (`cargo xtask dist` builds
/// that package from its own component first).
pub(crate) fn render() -> anyhow::Result<()> {
    let root = workspace_root();
    let src = root.join("docs/guide");
    let pages = summary(&std::fs::read_to_string(src.join("SUMMARY.md"))?)?;
    let out = guide_dir();
    if out.exists() {
        std::fs::remove_dir_all(&out).with_context(|| format!("removing {}", out.display()))?;
    }
    std::fs::create_dir_all(out.join("svclab"))?;
    let dist = crate::npm::package_dir().join("dist");
    for file in find_files(&dist, "") {
        let name = file.file_name().context("a file name")?;
        std::fs::copy(&file, out.join("svclab").join(name))?;
    }
    std::fs::write(out.join("guide.css"), GUIDE_CSS)?;
    let mut examples = 0;
    for (index, page) in pages.iter().enumerate() {
        let markdown = std::fs::read_to_string(src.join(&page.source))
            .with_context(|| format!("reading docs/guide/{}", page.source))?;
        let stem = page.source.trim_end_matches(".md");
        let (body, scenarios) = render_page(&markdown, stem)
            .with_context(|| format!("in docs/guide/{}", page.source))?;
        examples += scenarios.len();
        std::fs::create_dir_all(out.join("scenarios"))?;
        for (at, scenario) in scenarios.iter().enumerate() {
            std::fs::write(out.join(scenario_path(stem, at)), scenario)?;
        }
        let html = layout(&pages, index, &body);
        std::fs::write(out.join(html_name(&page.source)), html)?;
    }
    for file in find_files(&out, "") {
        let bytes = std::fs::read(&file)?;
        let mut name = file.into_os_string();
        name.push(".gz");
        std::fs::write(PathBuf::from(name), gzip(&bytes))?;
    }
    say(&format!("docs: wrote {} ({} pages, {examples} examples)", out.display(), pages.len()));
    Ok(())
}

/// The pages of `SUMMARY.md`: its `- [Title](file.md)` lines, in order.
fn summary(text: &str) -> anyhow::Result<Vec<Page>> {
    let mut pages = Vec::new();
    for line in text.lines() {
        let Some(item) = line.trim().strip_prefix("- [") else { continue };
        let Some((title, rest)) = item.split_once("](") else { bail!("bad SUMMARY line {line:?}") };
        let source = rest.trim_end_matches(')').to_owned();
        ensure!(source.ends_with(".md"), "SUMMARY links Markdown files, not {source:?}");
        pages.push(Page { title: title.to_owned(), source });
    }
    ensure!(!pages.is_empty(), "SUMMARY.md lists no pages");
    Ok(pages)
}

fn html_name(source: &str) -> String {
    format!("{}.html", source.trim_end_matches(".md"))
}

/// An example being collected: its info string and scenario, then its expected output.
struct Example {
    info: String,
    scenario: String,
    expected: Option<String>,
}

/// Where the guide keeps the scenario of a page's example (0-based `at`), for download and `src=`.
fn scenario_path(stem: &str, at: usize) -> String {
    format!("scenarios/{stem}-{}.yaml", at + 1)
}

/// The page's HTML body and the scenarios of its examples.
fn render_page(markdown: &str, stem: &str) -> anyhow::Result<(String, Vec<String>)> {
    let mut events: Vec<Event<'_>> = Vec::new();
    let mut pending: Option<Example> = None;
    let mut in_block: Option<String> = None;
    let mut block_text = String::new();
    let mut scenarios = Vec::new();
    let options = Options::ENABLE_TABLES | Options::ENABLE_HEADING_ATTRIBUTES;
    for event in Parser::new_ext(markdown, options) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(ref info)))
                if info.split_whitespace().next() == Some("svclab")
                    || (pending.is_some() && is_expected(info)) =>
            {
                in_block = Some(info.to_string());
                block_text.clear();
            }
            Event::Text(ref text) if in_block.is_some() => block_text.push_str(text),
            Event::End(TagEnd::CodeBlock) if in_block.is_some() => {
                let info = in_block.take().unwrap_or_default();
                match pending.take() {
                    Some(mut example) if is_expected(&info) => {
                        example.expected = Some(std::mem::take(&mut block_text));
                        let file = scenario_path(stem, scenarios.len());
                        events.push(Event::Html(CowStr::from(element(&example, &file)?)));
                        scenarios.push(example.scenario);
                    }
                    Some(example) => bail!("the example `{}` has no expected block", example.info),
                    None => {
                        pending = Some(Example {
                            info,
                            scenario: std::mem::take(&mut block_text),
                            expected: None,
                        })
                    }
                }
            }
            Event::Start(Tag::Link { link_type, dest_url, title, id })
                if dest_url.ends_with(".md") && !dest_url.contains("://") =>
            {
                let dest_url = CowStr::from(html_name(&dest_url));
                events.push(Event::Start(Tag::Link { link_type, dest_url, title, id }));
            }
            other => {
                if let Some(example) = &pending {
                    bail!(
                        "the example `{}` is not followed by its ```text expected block (run `svclab doc test --bless`)",
                        example.info
                    );
                }
                events.push(other);
            }
        }
    }
    if let Some(example) = pending {
        bail!("the example `{}` has no expected block", example.info);
    }
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    Ok((html, scenarios))
}

fn is_expected(info: &str) -> bool {
    let words: Vec<&str> = info.split_whitespace().collect();
    matches!(words.as_slice(), ["expected"] | [_, "expected"])
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// The value of `--name value` or `--name=value` among the command words.
fn option<'a>(words: &[&'a str], name: &str) -> Option<&'a str> {
    let flag = format!("--{name}");
    let prefix = format!("--{name}=");
    words.iter().enumerate().find_map(|(at, word)| {
        if *word == flag { words.get(at + 1).copied() } else { word.strip_prefix(prefix.as_str()) }
    })
}

/// The views an example shows: `show=`, else what its command prints (as the element decides).
fn shown(command: &[&str], attributes: &[(&str, &str)]) -> Vec<String> {
    if let Some((_, show)) = attributes.iter().find(|(name, _)| *name == "show") {
        return show.split(',').map(str::to_owned).collect();
    }
    match command.first().copied() {
        Some("render") if option(command, "proxy-mode") == Some("nftables") => {
            vec!["nftables".into()]
        }
        Some("render") => vec!["iptables".into()],
        Some("trace") => vec!["trace".into()],
        _ => vec!["diagnostics".into(), "allocations".into()],
    }
}

/// The playground's share fragment for an example (playground-web/src/share.rs: `#v1.` +
/// base64url of the raw deflate of `{"scenario", "tab", "trace"}`).
fn share_link(scenario: &str, command: &[&str], shown: &[String]) -> String {
    let quote = |text: &str| serde_json::to_string(text).unwrap_or_default();
    let mut json = format!("{{\"scenario\":{}", quote(scenario));
    let tab = match shown.first().map(String::as_str) {
        Some("iptables" | "nftables") => "rules",
        Some(other) => other,
        None => "",
    };
    if !tab.is_empty() {
        let _ = write!(json, ",\"tab\":{}", quote(tab));
    }
    if command.first() == Some(&"trace") {
        let get = |name| option(command, name).unwrap_or_default();
        let _ = write!(
            json,
            ",\"trace\":{{\"src\":{},\"dst\":{},\"port\":{},\"protocol\":{}}}",
            quote(get("src")),
            quote(get("dst")),
            quote(get("dport")),
            quote(&option(command, "protocol").unwrap_or("tcp").to_uppercase())
        );
    }
    json.push('}');
    let deflated = miniz_oxide::deflate::compress_to_vec(json.as_bytes(), 10);
    format!("{PLAYGROUND}#v1.{}", data_encoding::BASE64URL_NOPAD.encode(&deflated))
}

/// The words after `svclab` of a scenario's first line `# svclab <command> [options]`.
fn first_line_command(scenario: &str) -> Option<Vec<&str>> {
    let first = scenario.lines().next()?.strip_prefix('#')?;
    let mut words = first.split_whitespace();
    (words.next()? == "svclab").then(|| words.collect())
}

/// The `<svclab-example>` of one example, pre-rendered.
fn element(example: &Example, file: &str) -> anyhow::Result<String> {
    let is_attribute = |word: &&str| !word.starts_with('-') && word.contains('=');
    let mut words: Vec<&str> = example.info.split_whitespace().skip(1).collect();
    // The command may be the block's first line, `# svclab <command> [options]` (what docs
    // frameworks keep of a fence), as `svclab doc test` reads it; without either, `check`.
    if let Some(line) = first_line_command(&example.scenario) {
        words.retain(|word| is_attribute(word));
        words.extend(line);
    }
    if words.iter().all(is_attribute) {
        words.insert(0, "check");
    }
    let command: Vec<&str> = words.iter().copied().filter(|w| !is_attribute(w)).collect();
    let attributes: Vec<(&str, &str)> =
        words.iter().filter(|w| is_attribute(w)).filter_map(|w| w.split_once('=')).collect();
    ensure!(
        matches!(command.first(), Some(&"check" | &"render" | &"trace" | &"test" | &"upgrade")),
        "`{}`: examples run check, render, trace, test or upgrade",
        example.info
    );
    match command.first() {
        Some(&"test") => return Ok(static_example(example, &command, file, "Test suite")),
        Some(&"upgrade") => return Ok(static_example(example, &command, file, "Scenario")),
        _ => {}
    }
    // `profile=` and the other element attributes would change what the reader sees without
    // `svclab doc test` knowing: in Markdown the scenario's own ClusterProfile is the profile.
    if let Some((name, _)) = attributes.iter().find(|(name, _)| *name != "show") {
        bail!("`{}`: only show= may follow the command, not {name}=", example.info);
    }
    let shown = shown(&command, &attributes);
    if let Some(view) = shown.iter().find(|view| !VIEWS.contains(&view.as_str())) {
        bail!("`{}`: unknown view {view:?} (show= takes {})", example.info, VIEWS.join(", "));
    }
    let command_line = command.join(" ");
    let expected = example.expected.as_deref().unwrap_or_default();
    let mut html = format!(
        "<svclab-example command=\"{}\" show=\"{}\" playground=\"{PLAYGROUND}\">\n",
        escape(&command_line),
        escape(&shown.join(" "))
    );
    let _ = write!(
        html,
        "<pre class=\"svclab-scenario\" tabindex=\"0\" aria-label=\"Scenario\"><code>{}</code></pre>\n\
         <div class=\"svclab-bar\"><span><code>$ svclab {}</code></span><span class=\"svclab-links\">\
         <a href=\"{}\" download>YAML</a> \
         <a class=\"svclab-open\" data-svclab-share href=\"{}\">Open in the playground</a></span></div>\n\
         <div class=\"svclab-result\" role=\"region\" tabindex=\"0\" aria-label=\"Output of svclab {}\"><pre><code>{}</code></pre></div>\n\
         </svclab-example>\n",
        escape(&example.scenario),
        escape(&command_line),
        escape(file),
        escape(&share_link(&example.scenario, &command, &shown)),
        escape(&command_line),
        escape(expected),
    );
    Ok(html)
}

/// A `svclab test` or `svclab upgrade` example: the suite or scenario and its checked output,
/// pre-rendered and not live (a suite is not a scenario the element or the playground can run,
/// and the element has no rehearsal view).
fn static_example(example: &Example, command: &[&str], file: &str, label: &str) -> String {
    let command_line = command.join(" ");
    format!(
        "<div class=\"svclab-suite\">\n\
         <pre class=\"svclab-scenario\" tabindex=\"0\" aria-label=\"{}\"><code>{}</code></pre>\n\
         <div class=\"svclab-bar\"><span><code>$ svclab {}</code></span><span class=\"svclab-links\">\
         <a href=\"{}\" download>YAML</a></span></div>\n\
         <div class=\"svclab-result\" role=\"region\" tabindex=\"0\" aria-label=\"Output of svclab {}\"><pre><code>{}</code></pre></div>\n\
         </div>\n",
        escape(label),
        escape(&example.scenario),
        escape(&command_line),
        escape(file),
        escape(&command_line),
        escape(example.expected.as_deref().unwrap_or_default()),
    )
}

/// The whole HTML page around a rendered body.
fn layout(pages: &[Page], index: usize, body: &str) -> String {
    let page = &pages[index];
    let mut nav = String::new();
    for (at, other) in pages.iter().enumerate() {
        let current = if at == index { " aria-current=\"page\"" } else { "" };
        let _ = writeln!(
            nav,
            "<li><a href=\"{}\"{current}>{}</a></li>",
            html_name(&other.source),
            escape(&other.title)
        );
    }
    let mut pager = String::new();
    if let Some(previous) = index.checked_sub(1).and_then(|at| pages.get(at)) {
        let _ = write!(
            pager,
            "<a rel=\"prev\" href=\"{}\">← {}</a>",
            html_name(&previous.source),
            escape(&previous.title)
        );
    }
    if let Some(next) = pages.get(index + 1) {
        let _ = write!(
            pager,
            "<a rel=\"next\" href=\"{}\">{} →</a>",
            html_name(&next.source),
            escape(&next.title)
        );
    }
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"color-scheme\" content=\"light dark\">\n\
         <!-- Nothing may leave the page's origin: no CDN, no fonts, no analytics. -->\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'\">\n\
         <title>{} · svclab guide</title>\n<link rel=\"icon\" href=\"data:,\">\n\
         <link rel=\"stylesheet\" href=\"guide.css\">\n\
         <link rel=\"stylesheet\" href=\"svclab/svclab-example.css\">\n\
         <script type=\"module\" src=\"svclab/svclab-example.js\"></script>\n</head>\n<body>\n\
         <a class=\"skip\" href=\"#content\">Skip to the content</a>\n\
         <header class=\"top\"><a class=\"brand\" href=\"index.html\">svclab <small>guide</small></a>\
         <a class=\"to-playground\" href=\"{PLAYGROUND}\">Playground</a></header>\n\
         <div class=\"layout\">\n<nav aria-label=\"Guide\"><ol>\n{nav}</ol></nav>\n\
         <main id=\"content\">\n{body}<nav class=\"pager\" aria-label=\"Pages\">{pager}</nav>\n</main>\n</div>\n\
         </body>\n</html>\n",
        escape(&page.title)
    )
}

/// The guide's own look: the playground's palette, a sidebar and a readable column.
const GUIDE_CSS: &str = r#"/* svclab guide: the playground's palette, light and dark. */
:root {
  --bg: #f7f8fa; --panel: #ffffff; --fg: #1d2430; --muted: #5b6472; --line: #d8dde5;
  --accent: #2f5fd0; --code-bg: #f1f3f6; color-scheme: light;
}
@media (prefers-color-scheme: dark) {
  :root:not([data-theme="light"]) {
    --bg: #1b1e24; --panel: #22262e; --fg: #e3e7ee; --muted: #9aa3b2; --line: #363c47;
    --accent: #7aa2f7; --code-bg: #1b1f26; color-scheme: dark;
  }
}
:root[data-theme="dark"] {
  --bg: #1b1e24; --panel: #22262e; --fg: #e3e7ee; --muted: #9aa3b2; --line: #363c47;
  --accent: #7aa2f7; --code-bg: #1b1f26; color-scheme: dark;
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 16px/1.6 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; }
a { color: var(--accent); }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 0.5rem; background: var(--panel); padding: 0.3rem 0.6rem; }
.top { display: flex; align-items: center; gap: 1rem; padding: 0.6rem 1.2rem;
  background: var(--panel); border-bottom: 1px solid var(--line); }
.brand { font-weight: 650; font-size: 1.15rem; color: var(--fg); text-decoration: none; }
.brand small { font-weight: 400; color: var(--muted); }
.to-playground { margin-left: auto; }
.layout { display: grid; grid-template-columns: 16rem minmax(0, 1fr); max-width: 82rem; margin: 0 auto; }
.layout > nav { padding: 1.2rem 1rem; border-right: 1px solid var(--line); font-size: 14.5px; }
.layout > nav ol { list-style: none; margin: 0; padding: 0; display: grid; gap: 0.35rem; }
.layout > nav a { text-decoration: none; color: var(--fg); }
.layout > nav a[aria-current="page"] { color: var(--accent); font-weight: 600; }
main { padding: 1rem 2rem 3rem; min-width: 0; max-width: 56rem; }
code { font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.9em; }
:not(pre) > code { background: var(--code-bg); padding: 0.05rem 0.3rem; border-radius: 4px; }
main > pre { background: var(--code-bg); padding: 0.7rem 0.9rem; border-radius: 8px; overflow: auto; font-size: 13.5px; }
table { border-collapse: collapse; margin: 1rem 0; }
th, td { border-bottom: 1px solid var(--line); padding: 0.3rem 0.6rem; text-align: left; vertical-align: top; }
.svclab-suite { margin: 1rem 0; border: 1px solid var(--line); border-radius: 8px; overflow: hidden; background: var(--panel); }
.svclab-suite pre { margin: 0; padding: 0.7rem 0.9rem; overflow: auto; max-height: 32rem; font-size: 13.5px; background: var(--code-bg); }
.svclab-suite .svclab-bar { display: flex; justify-content: space-between; gap: 1rem; padding: 0.3rem 0.9rem;
  border-top: 1px solid var(--line); border-bottom: 1px solid var(--line); font-size: 13px; color: var(--muted); }
.svclab-suite .svclab-result pre { background: var(--panel); }
.pager { display: flex; justify-content: space-between; gap: 1rem; margin-top: 2.5rem; padding-top: 1rem; border-top: 1px solid var(--line); }
@media (max-width: 860px) {
  .layout { grid-template-columns: minmax(0, 1fr); }
  .layout > nav { border-right: 0; border-bottom: 1px solid var(--line); }
  main { padding: 1rem; }
}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn check(markdown: &str, expected_fragment: &str) {
        let (html, _) = render_page(markdown, "page")
            .unwrap_or_else(|err| (format!("error: {err:#}"), Vec::new()));
        assert!(html.contains(expected_fragment), "{expected_fragment:?} not in:\n{html}");
    }

    #[test]
    fn an_example_becomes_a_pre_rendered_element() {
        check(
            "```svclab render --proxy-mode nftables\nkind: Service\n```\n\n```text expected\ntable ip kube-proxy\n```\n",
            "<svclab-example command=\"render --proxy-mode nftables\" show=\"nftables\"",
        );
        check(
            "```svclab check show=diagnostics\na: <b>\n```\n```text expected\nout\n```\n",
            "<code>a: &lt;b&gt;\n</code>",
        );
    }

    #[test]
    fn the_command_may_be_the_first_line() {
        check(
            "```svclab\n# svclab trace --src 1.2.3.4 show=trace\nkind: Service\n```\n\n```expected\nout\n```\n",
            "<svclab-example command=\"trace --src 1.2.3.4\" show=\"trace\"",
        );
        check(
            "```svclab\nkind: Service\n```\n\n```expected\nout\n```\n",
            "<svclab-example command=\"check\" show=\"diagnostics allocations\"",
        );
    }

    #[test]
    fn an_example_without_expected_output_is_refused() {
        check("```svclab check\na\n```\n\nprose\n", "error: the example `svclab check`");
    }

    #[test]
    fn only_show_may_follow_the_command() {
        check(
            "```svclab check profile=1.30\na\n```\n```text expected\nb\n```\n",
            "error: `svclab check profile=1.30`: only show= may follow the command",
        );
        check(
            "```svclab check show=rules\na\n```\n```text expected\nb\n```\n",
            "unknown view \"rules\"",
        );
    }

    #[test]
    fn a_test_example_is_shown_with_its_checked_output() {
        let markdown = "```svclab test\nkind: TestSuite\na: <b>\n```\n\n```text expected\n0 passed, 0 failed\n```\n";
        check(markdown, "<div class=\"svclab-suite\">");
        check(markdown, "<code>kind: TestSuite\na: &lt;b&gt;\n</code>");
        check(markdown, "<code>$ svclab test</code>");
        check(markdown, "<pre><code>0 passed, 0 failed\n</code></pre>");
        let (html, _) = render_page(markdown, "page").unwrap_or_default();
        assert!(!html.contains("<svclab-example"), "{html}");
    }

    #[test]
    fn links_to_pages_point_at_html() {
        check("[next](trace.md)\n", "href=\"trace.html\"");
    }

    #[test]
    fn share_links_decode_to_the_playground_state() {
        let link = share_link("kind: Service\n", &["trace", "--src", "1.2.3.4"], &["trace".into()]);
        let payload = link.trim_start_matches("../#v1.");
        let bytes = data_encoding::BASE64URL_NOPAD.decode(payload.as_bytes()).unwrap_or_default();
        let json = miniz_oxide::inflate::decompress_to_vec(&bytes).unwrap_or_default();
        assert_eq!(
            String::from_utf8_lossy(&json),
            r#"{"scenario":"kind: Service\n","tab":"trace","trace":{"src":"1.2.3.4","dst":"","port":"","protocol":"TCP"}}"#
        );
    }
}
