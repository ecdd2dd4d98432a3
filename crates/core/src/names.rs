//! "Did you mean": the names closest to one that was not found, so an
//! error about an unknown clip or node can suggest a few instead of
//! listing every name of the model.

/// At most this many names are suggested.
pub const MAX_SUGGESTIONS: usize = 3;

/// Up to [`MAX_SUGGESTIONS`] of `candidates` closest to `name`, best first
/// (normalised Damerau-Levenshtein similarity, case-insensitive, against
/// the whole candidate or, slightly discounted, against one of its words (when that word is within 0.75)
/// split at `_`, `.`, `-` or spaces (`Shieldd` finds `Round_Shield`); at
/// least 0.7, or `name` contained in the candidate or the other way
/// round), each name once; ties keep the candidates' order.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let wanted = name.to_lowercase();
    let mut scored: Vec<(f64, usize, &'a str)> = Vec::new();
    for (order, candidate) in candidates.into_iter().enumerate() {
        if scored.iter().any(|(_, _, c)| *c == candidate) {
            continue;
        }
        let lower = candidate.to_lowercase();
        let mut score = strsim::normalized_damerau_levenshtein(&wanted, &lower);
        for word in lower.split(['_', '.', '-', ' ']).filter(|w| !w.is_empty()) {
            // Only a close word counts: one or two typos, not a shared
            // ending (`walking` is not `running`).
            let close = strsim::normalized_damerau_levenshtein(&wanted, word);
            if close >= 0.75 {
                score = score.max(0.9 * close);
            }
        }
        if !wanted.is_empty() && (lower.contains(&wanted) || wanted.contains(&lower)) {
            score = score.max(0.75);
        }
        if score >= 0.7 {
            scored.push((score, order, candidate));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, _, c)| c)
        .collect()
}

/// `did you mean `Walk`, `Walking`? ` plus what else helps: the sentence an
/// unknown-name error ends with. `kind` names what was looked up
/// (`clips`, `nodes`), `total` how many the model has. With no close name
/// and few candidates, all are listed; with many, only their number.
pub fn suggestion<'a>(
    name: &str,
    kind: &str,
    candidates: impl IntoIterator<Item = &'a str> + Clone,
) -> String {
    let close = closest(name, candidates.clone());
    let all: Vec<&str> = candidates.into_iter().collect();
    let quoted = |names: &[&str]| {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !close.is_empty() {
        format!("did you mean {}?", quoted(&close))
    } else if all.is_empty() {
        format!("the model has no {kind}")
    } else if all.len() <= 8 {
        format!("the model's {kind}: {}", quoted(&all))
    } else {
        format!(
            "none of the model's {} {kind} is close; `rigbake inspect` or a glTF viewer lists them",
            all.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_best_first() {
        let names = ["Idle", "Walking_A", "Walking_B", "Running_A", "Death_A"];
        assert_eq!(closest("Walking", names), ["Walking_A", "Walking_B"]);
        assert_eq!(closest("walking_a", names), ["Walking_A", "Walking_B"]);
        assert_eq!(closest("Runing_A", names), ["Running_A"]);
        assert!(closest("Zzz", names).is_empty());
        let shields = [
            "Badge_Shield",
            "Round_Shield",
            "Knight_Helmet",
            "handslot.l",
        ];
        assert_eq!(
            closest("Shieldd", shields),
            ["Badge_Shield", "Round_Shield"]
        );
    }

    #[test]
    fn the_sentence_lists_few_names_and_counts_many() {
        let few = ["Idle", "Walk"];
        assert_eq!(suggestion("Wlak", "clips", few), "did you mean `Walk`?");
        assert_eq!(
            suggestion("Zzz", "clips", few),
            "the model's clips: `Idle`, `Walk`"
        );
        let many: Vec<String> = (0..76).map(|i| format!("Anim{i:02}")).collect();
        let text = suggestion("Zzz", "clips", many.iter().map(String::as_str));
        assert!(
            text.contains("76 clips") && !text.contains("Anim00"),
            "{text}"
        );
        assert_eq!(suggestion("x", "nodes", []), "the model has no nodes");
    }
}
