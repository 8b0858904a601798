//! PLACEHOLDER — replaced by its owner.
