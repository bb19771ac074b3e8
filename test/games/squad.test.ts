import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { PlayerListError } from '../../src/games/errors.js';
import { parseSquadListPlayers, squadGame } from '../../src/games/squad.js';
import { fixture, scriptedQuery } from '../players/fixtures.js';

describe('parseSquadListPlayers against recorded answers', () => {
  test('older "SteamID:" column: every active player, none of the recently disconnected', () => {
    const ids = parseSquadListPlayers(fixture('squad-listplayers-steamid.txt'));
    assert.deepEqual(ids, [
      '76561198054760135',
      '76561198834340306',
      '76561197963356626',
      '76561198450388317',
      '76561198056033287',
      '76561198039847055',
      '76561198349811676',
      '76561198110126580',
      '76561198202943394',
      '76561198314773221',
      '76561198019320471',
      '76561198126686654',
      '76561198052074428',
      '76561198078017064',
      '76561198420739023',
      '76561197991020488',
      '76561198013218109',
      '76561199029350316',
      '76561198015963880',
      '76561197965452181',
      '76561197995266740',
      '76561198124649264',
      '76561198159379914',
      '76561198042102731',
      '76561198203311975',
      '76561199043221431',
      '76561198079809154',
      '76561198058200414',
      '76561198452778797',
      '76561198996340755',
      '76561198000419593',
      '76561198068361421',
      '76561198102527401',
      '76561198866437420',
      '76561198000485005',
      '76561198065331632',
      '76561198015620832',
      '76561198047078003',
      '76561198151799852',
      '76561198011805749',
      '76561198090617959',
      '76561198014626760',
      '76561197973804097',
      '76561198066122557',
      '76561198021646413',
      '76561198064620452',
      '76561198063947945',
      '76561198060098041',
      '76561198429663037',
      '76561198199090610',
      '76561198237497942',
      '76561198112373408',
      '76561198127506682',
      '76561198232875588',
      '76561198318496586',
      '76561199033007215',
      '76561198057668694',
      '76561198254291009',
      '76561198143940645',
      '76561198141660689',
      '76561198825610802',
      '76561198126882327',
      '76561197961119401',
      '76561198249719990',
      '76561198082093793',
      '76561197990281056',
      '76561197960545042',
      '76561199020956108',
      '76561197989256039',
      '76561198827732228',
      '76561197982549742',
      '76561197994356835',
      '76561197970328021',
      '76561198010474901',
      '76561197978096854',
      '76561198190418050',
      '76561198320549995',
    ]);
    for (const gone of ['76561198040530100', '76561198007358472', '76561198018627565']) assert.ok(!ids?.includes(gone));
  });

  test('newer "Online IDs:" column: SteamID64 and EOS id', () => {
    assert.deepEqual(parseSquadListPlayers(fixture('squad-listplayers-online-ids.txt')), [
      '76561198016942077',
      '0002a10186d9414496bf20d22d3860ba',
    ]);
  });

  test('empty server', () => {
    assert.deepEqual(parseSquadListPlayers(fixture('squad-listplayers-empty.txt')), []);
  });

  test('ids are read from their own column only: a name cannot add one', () => {
    const answer = [
      '----- Active Players -----',
      'ID: 3 | Online IDs: EOS: 0002a10186d9414496bf20d22d3860ba steam: 76561198016942077 | Name: x | steam: 76561198000000666 | Team ID: 1 | Squad ID: N/A | Is Leader: False | Role: IMF_Rifleman_01',
      '----- Recently Disconnected Players [Max of 15] -----',
      'ID: 4 | Online IDs: EOS: 00020817daeb4e2faf717bdeeb18a9da steam: 76561197996303481 | Since Disconnect: 02m.11s | Name:  Yuca',
    ].join('\n');
    assert.deepEqual(parseSquadListPlayers(answer), ['76561198016942077', '0002a10186d9414496bf20d22d3860ba']);
  });

  test('a server event line instead of a player list is rejected', () => {
    assert.equal(
      parseSquadListPlayers('Jon (Steam ID: 76561197999957991) has created Squad 1 (Squad Name: TESTICLES) on United States Army'),
      null,
    );
  });
});

describe('squad preset', () => {
  test('sends ListPlayers', async () => {
    const { query, asked } = scriptedQuery({ ListPlayers: fixture('squad-listplayers-online-ids.txt') });
    assert.deepEqual(await squadGame.readPlayers(query), ['76561198016942077', '0002a10186d9414496bf20d22d3860ba']);
    assert.deepEqual(asked, ['ListPlayers']);
  });

  test('an unknown answer is a PlayerListError', async () => {
    const { query } = scriptedQuery({ ListPlayers: 'Command not recognized: ListPlayers' });
    await assert.rejects(squadGame.readPlayers(query), PlayerListError);
  });
});
