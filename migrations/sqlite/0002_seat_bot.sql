-- Bot seats (issue 7): the level of the bot playing a seat ('random', 'greedy',
-- 'expectimax'), NULL for a person. A bot seat comes back as a bot after a restart.
-- Keep in step with ../postgres/0002_seat_bot.sql.
ALTER TABLE seats ADD COLUMN bot TEXT;
