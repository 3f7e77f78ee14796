-- Fair dice (issue 15, docs/FAIR_DICE.md): the game's dice record as JSON text — scheme,
-- mode, the secret server seed and the client seeds. NULL for games stored before it.
-- Keep in step with ../postgres/0003_game_dice.sql.
ALTER TABLE games ADD COLUMN dice TEXT;
