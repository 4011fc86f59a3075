//! CSV broken the way hand-edited or truncated exports break: what
//! (0 a cell emptied, 1 a non-number, 2 a negative, huge or non-finite
//! number, 3 a name that names nothing, 4 a header column dropped, 5 a
//! line cut short, 6 a line repeated), which line, which cell.

pub fn mutate_csv(text: &str, what: u8, line: usize, cell: usize) -> String {
    let mut lines: Vec<Vec<String>> = text
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    let l = line % lines.len();
    let c = cell % lines[l].len();
    match what % 7 {
        0 => lines[l][c] = String::new(),
        1 => lines[l][c] = ["x", "1e", "--", "0x10", "\""][cell % 5].into(),
        2 => lines[l][c] = ["-1", "-1e-9", "1e308", "1e400", "NaN", "inf", "1e15"][cell % 7].into(),
        3 => lines[l][c] = ["nobody", "", " padded"][cell % 3].into(),
        4 => {
            lines[0].remove(c);
        }
        5 => lines[l].truncate(c),
        _ => {
            let copy = lines[l].clone();
            lines.push(copy);
        }
    }
    lines
        .iter()
        .map(|l| l.join(","))
        .collect::<Vec<_>>()
        .join("\n")
}
