//! Splitting one assembler line into tokens: whitespace separates tokens
//! except inside `[...]` and `"..."`; `#` or `;` outside them starts a comment.

use super::AsmErrorKind;

/// A token and the 1-based column where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token<'a> {
    /// Token text.
    pub text: &'a str,
    /// 1-based column of its first character.
    pub column: usize,
}

/// Tokenizes a line (comment removed). On error, returns the column and kind.
pub fn tokenize(line: &str) -> Result<Vec<Token<'_>>, (usize, AsmErrorKind)> {
    let mut tokens = Vec::new();
    let mut start: Option<usize> = None;
    let mut depth = 0usize;
    let mut in_quote = false;
    let mut open_at = 0usize;
    let mut end_of_code = line.len();
    for (i, c) in line.char_indices() {
        if in_quote {
            if c == '"' {
                in_quote = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_quote = true;
                open_at = i;
                start.get_or_insert(i);
            }
            '[' => {
                if depth == 0 {
                    open_at = i;
                }
                depth += 1;
                start.get_or_insert(i);
            }
            ']' => {
                if depth == 0 {
                    return Err((col(line, i), AsmErrorKind::Unbalanced));
                }
                depth -= 1;
            }
            '#' | ';' if depth == 0 => {
                end_of_code = i;
                break;
            }
            c if c.is_whitespace() && depth == 0 => {
                if let Some(s) = start.take() {
                    tokens.push(Token {
                        text: &line[s..i],
                        column: col(line, s),
                    });
                }
            }
            _ => {
                start.get_or_insert(i);
            }
        }
    }
    if in_quote {
        return Err((col(line, open_at), AsmErrorKind::Unterminated("string")));
    }
    if depth > 0 {
        return Err((col(line, open_at), AsmErrorKind::Unterminated("bracket")));
    }
    if let Some(s) = start {
        tokens.push(Token {
            text: &line[s..end_of_code],
            column: col(line, s),
        });
    }
    Ok(tokens)
}

fn col(line: &str, byte: usize) -> usize {
    line[..byte].chars().count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_and_quotes_group() {
        let t = tokenize("  matmul psum=[0x2000000; 1,64; 0,1; 0,1] q=\"a b;#\" # tail").unwrap();
        let texts: Vec<&str> = t.iter().map(|t| t.text).collect();
        assert_eq!(
            texts,
            vec!["matmul", "psum=[0x2000000; 1,64; 0,1; 0,1]", "q=\"a b;#\""]
        );
        assert_eq!(t[0].column, 3);
        assert_eq!(t[1].column, 10);
    }

    #[test]
    fn comments_and_errors() {
        assert!(tokenize("; only a comment").unwrap().is_empty());
        assert_eq!(
            tokenize("nop x=[1; 2").unwrap_err(),
            (7, AsmErrorKind::Unterminated("bracket"))
        );
        assert_eq!(
            tokenize("nop q=\"abc").unwrap_err(),
            (7, AsmErrorKind::Unterminated("string"))
        );
        assert_eq!(
            tokenize("nop ]").unwrap_err(),
            (5, AsmErrorKind::Unbalanced)
        );
    }
}
