//! Which path of the max-min operator (or of NFC's LP) produced an answer:
//! typed in the library, printed as its name in the certificates.

use serde::{Serialize, Serializer};

/// Which path produced an answer (the dispatcher's order and the rule of
/// each path are in `leontief_drfh::maxmin`'s module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Path {
    /// The rounds on the LP holding every runnable pair (small instances,
    /// or where no shortcut applied).
    #[default]
    Flat,
    /// The rounds on an LP grown by column generation (many pairs, or
    /// from the pooled LP's pairs when the pooled levels were out of
    /// reach).
    Generated,
    /// The pooled levels (of progressive filling on the pooled servers)
    /// realised per server in one LP (no placement lists, many pairs).
    Pooled,
    /// The pooled levels realised group by group, in this many groups of
    /// entries: as `Pooled`, on many users and many entries.
    Grouped(usize),
    /// Every user at its task cap, placed without an LP.
    Capped,
    /// The pattern master over few capacity rows.
    Patterns,
}

impl Path {
    /// The name the certificates print (`"pooled"` for both pooled
    /// paths; the grouped path's groups are printed beside it).
    pub fn name(&self) -> &'static str {
        match self {
            Path::Flat => "flat",
            Path::Generated => "generated",
            Path::Pooled | Path::Grouped(_) => "pooled",
            Path::Capped => "capped",
            Path::Patterns => "patterns",
        }
    }

    /// Groups of entries on the grouped path.
    pub fn groups(&self) -> Option<usize> {
        match self {
            Path::Grouped(g) => Some(*g),
            _ => None,
        }
    }

    /// True on either pooled path.
    pub fn is_pooled(&self) -> bool {
        matches!(self, Path::Pooled | Path::Grouped(_))
    }
}

impl std::fmt::Display for Path {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Path {
    /// Its [`Path::name`].
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}
