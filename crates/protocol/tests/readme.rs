//! Every example in `proto/README.md` parses: ```` ```json client ```` blocks as
//! `ClientMessage`, ```` ```json server ```` blocks as `ServerMessage`.

use parchis_protocol::{parse_client_message, ServerMessage};

#[test]
fn readme_examples_parse() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../proto/README.md");
    let text = std::fs::read_to_string(path).expect("read proto/README.md");
    let (mut clients, mut servers) = (0, 0);
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let kind = match line.trim() {
            "```json client" => "client",
            "```json server" => "server",
            _ => continue,
        };
        let block: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
        let json = block.join("\n");
        if kind == "client" {
            clients += 1;
            if let Err(e) = parse_client_message(&json) {
                panic!("client example does not parse ({e}):\n{json}");
            }
        } else {
            servers += 1;
            if let Err(e) = serde_json::from_str::<ServerMessage>(&json) {
                panic!("server example does not parse ({e}):\n{json}");
            }
        }
    }
    assert!(clients >= 9, "every client message has an example");
    assert!(servers >= 8, "server examples found: {servers}");
}
