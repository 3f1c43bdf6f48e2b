//! Snapshot tests of every pane and modal at 80×24 and 140×40 (ratatui TestBackend + insta).
