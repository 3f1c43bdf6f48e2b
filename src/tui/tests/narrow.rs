//! Narrow screens: what gives way first in each place, so that what matters stays whole (the
//! tab showing, a start time, a tool's side effect, a resource's URI). The fixtures are
//! `tests.rs`'s and `tests_content.rs`'s.

use crate::tui::listing::ContentEvent;
use crate::tui::pane_state::Pane;
use crate::tui::tests::draw;
use crate::tui::tests::fixtures::populated;
use crate::tui::tests::server_content::{content, listing};

/// On a narrow screen the Servers title drops its least needed parts whole (the deadline, then
/// the bars' scale) instead of being cut mid-word, and the tab strip uses short titles so every
/// tab stays in view.
#[test]
fn a_narrow_screen_drops_title_parts_whole_and_shortens_the_tabs() {
    let (app, _) = populated();
    for (width, deadline, bars) in [(80, true, true), (45, false, true), (30, false, false)] {
        let screen = draw(&app, (width, 18));
        let title = screen.lines().next().unwrap_or_default();
        assert!(title.contains("Servers 2/4 ready"), "{title}");
        assert_eq!(title.contains("deadline 40.0s"), deadline, "{title}");
        assert_eq!(title.contains("deadline"), deadline, "{title}");
        assert_eq!(title.contains("bars 0–"), bars, "{title}");
    }
    let tabs = |width| {
        let screen = draw(&app, (width, 18));
        let line = screen
            .lines()
            .find(|l| l.contains(" Tools "))
            .unwrap_or_default();
        line.to_string()
    };
    let wide = tabs(80);
    assert!(
        wide.contains(" Resources ") && wide.contains("Tab switches"),
        "{wide}"
    );
    // The hint goes first, then the titles get short.
    let narrower = tabs(55);
    assert!(narrower.contains(" Resources  Prompts "), "{narrower}");
    assert!(!narrower.contains("Tab switches"), "{narrower}");
    let narrow = tabs(45);
    assert!(
        narrow.contains(" Det ") && narrow.contains(" Res  Prompts "),
        "{narrow}"
    );
    // Narrower still: the tabs around the shown one, the others marked as left out.
    let tiny = tabs(30);
    assert!(tiny.contains(" Tools ") && tiny.contains('›'), "{tiny}");
    assert!(!tiny.contains(" Prompts"), "{tiny}");
    assert!(tiny.trim_matches('"').chars().count() <= 30, "{tiny}");
}

/// On a narrow pane a server row drops whole columns (tool count, then the waterfall) and cuts
/// the name last; a time is never cut at the edge (`8m` for `8ms`).
#[test]
fn a_narrow_servers_pane_drops_whole_columns_never_cuts_a_time() {
    let (app, _) = populated();
    let row = |width| {
        let screen = draw(&app, (width, 18));
        // The second server's row, under the title.
        screen
            .lines()
            .nth(2)
            .unwrap_or_default()
            .trim_matches('"')
            .to_string()
    };
    let wide = row(80);
    assert!(
        wide.contains("7ms") && wide.contains("2 tools") && wide.contains('▕'),
        "{wide}"
    );
    // The tool count goes first, the waterfall (narrowed) stays.
    let narrow = row(56);
    assert!(
        narrow.contains(" 7ms│") || narrow.contains(" 7ms "),
        "{narrow}"
    );
    assert!(
        !narrow.contains("tools") && narrow.contains('▕'),
        "{narrow}"
    );
    // Then the waterfall, then the name is cut: the time is still whole.
    for width in [34, 30, 26] {
        let tiny = row(width);
        assert!(tiny.contains(" 7ms"), "{width}: {tiny}");
        assert!(!tiny.contains('▕'), "{width}: {tiny}");
        assert!(tiny.chars().count() <= width as usize, "{width}: {tiny}");
    }
}

/// On a narrow Tools pane the names are cut, then DESTR goes: the effect is always whole.
#[test]
fn a_narrow_tools_pane_shows_each_effect_whole() {
    let (mut app, _) = populated();
    app.set_focus(Pane::Tools);
    for (width, destr) in [(80, true), (40, true), (30, true), (26, false)] {
        let screen = draw(&app, (width, 24));
        let rows: Vec<&str> = screen
            .lines()
            .filter(|l| l.contains("mcp__"))
            .filter(|l| !l.contains(" calls it "))
            .collect();
        assert!(!rows.is_empty(), "{screen}");
        for row in &rows {
            assert!(
                row.contains("MUTATING") || row.contains("read-only"),
                "{width}: {row}"
            );
        }
        assert_eq!(screen.contains("DESTR"), destr, "{width}: {screen}");
    }
}

/// On a narrow pane a long server name gives way: the URI keeps room to tell rows apart.
#[test]
fn a_narrow_resources_pane_keeps_room_for_the_uri() {
    let (mut app, _) = populated();
    content(
        &mut app,
        ContentEvent::ResourcesListed {
            server: "notes-trusted".into(),
            result: Ok(listing("notes-trusted")),
        },
    );
    app.set_focus(Pane::Resources);
    let screen = draw(&app, (40, 24));
    let rows: Vec<&str> = screen.lines().filter(|l| l.contains("demo:")).collect();
    assert!(!rows.is_empty(), "{screen}");
    for row in rows {
        assert!(row.contains("demo://"), "{screen}");
    }
}

/// On a short screen the approval keeps its choices, deny among them, and the start of the
/// arguments in view; the head gives way. The footer ranks deny right after allow.
#[test]
fn a_short_screen_keeps_the_approvals_choices_and_arguments() {
    let (mut app, _) = populated();
    app.on_runtime_event(crate::runtime::RuntimeEvent::ApprovalRequested(
        crate::tui::tests::approval(
            7,
            crate::tui::tests::fixtures::ignored("notes", "write_note"),
        ),
    ));
    for (w, h) in [(40, 14), (60, 12), (80, 24)] {
        let screen = draw(&app, (w, h));
        assert!(
            screen.contains("tool    mcp__notes__write_note"),
            "{w}x{h}\n{screen}"
        );
        assert!(screen.contains("n/Esc deny"), "{w}x{h}\n{screen}");
        let footer = screen.lines().last().unwrap_or_default();
        assert!(
            footer.contains("y allow once  n/Esc deny"),
            "{w}x{h}: {footer}"
        );
        // What does not fit scrolls into view, the choices staying: the effect and the
        // arguments are all reachable.
        let mut seen = screen.clone();
        for scroll in 1..=app.overlays.scroll_limit.get() {
            app.overlays.approval_scroll = scroll;
            let more = draw(&app, (w, h));
            assert!(more.contains("n/Esc deny"), "{w}x{h} at {scroll}\n{more}");
            seen.push_str(&more);
        }
        app.overlays.approval_scroll = 0;
        for part in ["effect  MUTATING", "arguments:", "\"title\": \"groceries\""] {
            assert!(seen.contains(part), "{w}x{h}: {part}\n{seen}");
        }
    }
}
