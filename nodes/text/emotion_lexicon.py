"""Word lists behind the offline F2 emotion reading (Japanese and English).

Data only; the matching lives in ``emotion_f2``. Every row is ``(terms, valence, arousal, tags)``:
terms separated by ``|``, valence −1..1, arousal 0..1, tags from the design notes' list only
(a test checks that). Texts are matched after NFKC + lower-casing, so write terms that way.
Japanese terms match as substrings (longest term first), so adjective stems such as 嬉し cover
嬉しい/嬉しかった and a following 「くない」 reads as a negation. English terms match whole words;
a trailing ``*`` means "this stem and any ending" (frustrat* → frustrated, frustrating).
A Japanese ``^term`` must not follow another word and ``term$`` must not run on into one (so
昨日やったゲーム and できたら are not read as joy). A term that already holds a negation (仕方ない,
can't wait) is its own row, so it is not negated a second time.
"""

from __future__ import annotations

Row = tuple[str, float, float, str]

JA_ROWS: tuple[Row, ...] = (
    # joy
    ("嬉し|うれし|楽し|たのし", 0.8, 0.6, "joy"),
    ("^やった$|^やったー|^やったぁ|よっしゃ|わーい|やりぃ", 0.8, 0.85, "joy excitement"),
    ("最高", 0.9, 0.8, "joy excitement"),
    ("幸せ|しあわせ|素敵|すてき|素晴らし|すばらし|美味し|おいし|喜|面白|おもしろ|ウケる|笑った", 0.7, 0.55, "joy"),
    ("すごい|すごっ|凄い|すげー|すげえ", 0.6, 0.7, "joy surprise"),
    # satisfaction
    ("まあまあ|まずまず", 0.3, 0.2, "satisfaction"),
    ("満足|いい感じ|良い感じ|悪くない|上出来|納得|充実|すっきり|スッキリ|ちょうどいい|やりがい|気に入", 0.5, 0.3,
     "satisfaction"),
    # relief
    ("よかった$|良かった$|ほっと|ホッと|安心|一安心|間に合った|大丈夫だった|問題なかった|やっと|ようやく", 0.6, 0.3,
     "relief"),
    ("助かった|助かる|助かり", 0.65, 0.4, "relief gratitude"),
    # excitement / hope
    ("わくわく|ワクワク|興奮|テンション上が|待ちきれない|楽しみ", 0.7, 0.8, "excitement hope"),
    ("ドキドキ|どきどき", 0.3, 0.85, "excitement"),
    ("期待|希望|願って|祈って|祈る|といいな|といいね|前向き|いつかきっと", 0.45, 0.4, "hope"),
    # gratitude
    ("ありがと|有難う|感謝|おかげ|お陰", 0.65, 0.3, "gratitude"),
    # pride
    ("できた$|出来た$|成功|うまくいった|上手くいった|上手くできた|達成|合格|受かった|勝った|褒められ|誇り|自慢|自信がつ|自信が持て|優勝|一等賞|1位|入賞", 0.65, 0.65,
     "pride satisfaction"),
    # love
    ("好き|大好き|愛して|愛おし|可愛|かわいい|かわいかった|大切な人|恋して", 0.7, 0.5, "love"),
    # curiosity
    ("気になる|知りたい|興味|面白そう|調べてみたい|試してみたい|やってみたい|不思議", 0.4, 0.5, "curiosity"),
    # sadness
    ("悲し|かなし|つらい|辛い|落ち込|泣い|泣き|泣け|涙|切な|憂鬱|ゆううつ|凹ん|へこん|虚し|むなし|しょんぼり|亡くな|悲劇",
     -0.7, 0.35, "sadness"),
    ("残念", -0.5, 0.3, "sadness regret"),
    ("ショック|しょっく", -0.7, 0.8, "sadness surprise"),
    # anger
    ("怒|ムカつ|むかつ|ムカムカ|腹が立|腹立|頭にくる|頭に来|許せない|ブチギレ|キレた|キレそう|うざ|ウザ", -0.8, 0.9,
     "anger"),
    ("ふざけ|最悪|最低|いい加減にし", -0.85, 0.85, "anger frustration"),
    # frustration
    ("イライラ|いらいら|もどかし|うまくいかな|上手くいかな|できなかった|出来なかった|進まな|うんざり|困った|困る|"
     "めんどくさ|面倒|めんどう|失敗|ダメだ|だめだ|またか|ストレス|大変だ|大変でした", -0.6, 0.55,
     "frustration"),
    ("疲れ|しんどい|だるい|へとへと|くたくた|ぐったり|つまらな|つまんな|退屈|飽きた|いまいち|イマイチ", -0.45, 0.25, ""),
    ("ついてない|ツイてない|ついてなかった|運が悪", -0.5, 0.4, "frustration"),
    # anxiety / fear
    ("眠れな|寝れな", -0.3, 0.7, "anxiety"),
    ("不安|心配|緊張|焦って|焦る|焦り|焦った|気がかり|落ち着かな|間に合わな|大丈夫かな|どうしよう", -0.65, 0.7, "anxiety"),
    ("怖い|怖かった|怖く|こわい|こわかった|こわく|恐ろし|恐怖|ゾッと|ぞっと|ビビ|びび", -0.7, 0.8, "fear"),
    # disgust
    ("嫌|キモい|きもい|気持ち悪|吐き気|気色悪", -0.7, 0.55, "disgust"),
    # regret / guilt
    ("後悔|悔し|くやし|ばよかった|やり直したい|諦めきれない|^しまった", -0.6, 0.5, "regret"),
    ("申し訳ない|申し訳なかった|申し訳ありません|申し訳ございません|ごめん|すまない|罪悪感|自分のせい|悪いことをした", -0.5, 0.4, "guilt"),
    # loneliness
    ("寂し|さびし|さみし|孤独|ひとりぼっち|一人ぼっち|独りぼっち|会いたい|恋しい", -0.55, 0.3, "loneliness sadness"),
    # resignation
    ("仕方な|仕方がな|しかたな|しょうがな|しょーがな|しゃーない|諦め|あきらめ|どうせ|やむを得ない|もういい|どうでもいい",
     -0.4, 0.2, "resignation sadness"),
    # nostalgia / surprise / confusion
    ("懐かし|なつかし|思い出|あの頃|あのころ", 0.35, 0.35, "nostalgia"),
    ("びっくり|ビックリ|驚|まさか|えっ!|えっ、|えっ?|信じられな|うそでしょ|嘘でしょ|マジか|まじか|意外", 0.05, 0.8,
     "surprise"),
    ("わからな|分からな|わかんな|分かんな|混乱|意味不明|どういうこと|迷って|迷う|困惑|戸惑", -0.3, 0.55,
     "confusion"),
    # everyday evaluative words (calm comfort, kindness, rudeness, luck, pain, shame)
    ("快適|心地よ|心地い|気持ちいい|気持ち良|癒さ|癒し|落ち着く|落ち着いた|落ち着け|のんびり|リラックス|穏やか|くつろ|"
     "ほっこり|使いやすい|便利", 0.55, 0.15, "satisfaction relief"),
    ("優しい|やさしい|親切|気が利", 0.6, 0.35, "gratitude"),
    ("綺麗|きれい|美し|完璧|見事|感動|推し|お気に入り", 0.7, 0.6, "joy"),
    ("ラッキー|幸運|運がいい|運が良|当選", 0.7, 0.7, "joy surprise"),
    ("生まれた$|誕生した|婚約|結婚した|結婚します", 0.75, 0.7, "joy"),
    ("失礼|感じ悪|感じが悪|態度が悪|ひどい|酷い|ひどかった|迷惑", -0.7, 0.7, "anger disgust"),
    ("うるさ|邪魔|無駄|損した", -0.5, 0.6, "frustration"),
    ("まずい|不味|汚い|きたない", -0.55, 0.45, "disgust"),
    ("危ない|危険|やばかった", -0.5, 0.75, "fear anxiety"),
    ("痛い|痛かった|痛く|苦し|可哀想|かわいそう|気の毒|不運|残念ながら", -0.6, 0.45, "sadness"),
    ("恥ずかし|恥をかい|情けない", -0.5, 0.6, "guilt"),
    ("羨まし|うらやまし|嫉妬", -0.35, 0.55, ""),
    # determination
    ("頑張|がんば|決意|決心|覚悟|諦めない|負けない|やってやる|やるぞ|挑戦|絶対にやる", 0.45, 0.7, "determination"),
)

EN_ROWS: tuple[Row, ...] = (
    # joy
    ("happy|happiness|glad|joy*|enjoy*|delight*|cheerful|wonderful|fantastic|terrific|lovely|delicious|fun|"
     "beautiful|gorgeous|laugh*|funny|great|best|made my day|so moving|very moving|tears of joy", 0.75, 0.6,
     "joy"),
    ("yay|hooray|hurray|woohoo|woo-hoo|awesome|best day", 0.85, 0.85, "joy excitement"),
    ("amazing|amazed", 0.8, 0.8, "joy surprise"),
    # satisfaction
    ("not bad|pretty good|good enough|so-so|okay-ish|decent|good|nice|satisf*|pleased|content with", 0.4, 0.3,
     "satisfaction"),
    # relief
    ("relief|relieved|phew|finally|no worries|don't worry|thank god|thank goodness|it worked|made it", 0.6, 0.35,
     "relief"),
    # excitement / hope
    ("excit*|thrill*|can't wait|cannot wait|pumped|stoked|looking forward", 0.75, 0.85, "excitement hope"),
    ("hope*|hoping|wish*|fingers crossed|optimis*", 0.45, 0.4, "hope"),
    # gratitude
    ("thank*|grateful|appreciat*|owe you", 0.65, 0.3, "gratitude"),
    # pride
    ("proud|finished|i did it|we did it|nailed it|accomplish*|achiev*|succeed*|success*|won|passed my|passed the|"
     "promoted|got the job", 0.7, 0.7, "pride satisfaction"),
    # love
    ("love*|adore*|cute|cherish*|care about|in love", 0.75, 0.5, "love"),
    # curiosity
    ("curious|i wonder|wonder if|interesting|interested|fascinat*|intrigu*|want to know|want to learn", 0.4, 0.5,
     "curiosity"),
    # sadness
    ("sad|sadly|sadness|unhappy|depress*|cry|cried|crying|cries|tears|heartbroken|broke my heart|miserable|gloomy|"
     "grief|griev*|passed away|died|sorry to hear|disappoint*|hopeless*|down in the dumps", -0.7, 0.35, "sadness"),
    ("upset", -0.6, 0.6, "sadness anger"),
    # anger
    ("angry|anger|furious|mad|pissed|outrag*|livid|how dare|screw you|screw this|hate*|unfair|"
     "are you kidding me|you've got to be kidding", -0.8, 0.9, "anger frustration"),
    ("annoy*|irritat*|frustrat*|fed up|sick of|ugh|argh|stuck|ridiculous|worst|terrible|awful|horrible|"
     "waste of time|lost my|lost the|lost our|doesn't work|does not work|not working|still broken|fail*", -0.65, 0.65,
     "frustration"),
    ("tired|exhausted|drained|worn out|burnt out|burned out|bad|boring|bored|dull", -0.5, 0.25, ""),
    # anxiety / fear
    ("anxious|anxiety|worr*|nervous|uneasy|on edge|panic*|overwhelm*|tense|stress*|what if", -0.65,
     0.7, "anxiety"),
    # sleeplessness is arousal more than displeasure: the cause (excited or worried) sets the valence
    ("can't sleep|couldn't sleep|cannot sleep", -0.3, 0.7, "anxiety"),
    ("afraid|scared|scary|fear|fears|feared|fearful|terrified|terrifying|frighten*|horrif*|dread*|creepy", -0.7,
     0.85, "fear"),
    ("fearless", 0.5, 0.6, "determination"),
    # disgust
    ("disgust*|gross|yuck|eww|ew|revolting|sickening|nasty|can't stand", -0.75, 0.6, "disgust"),
    # regret / guilt
    ("regret*|should have|should've|wish i had|wish i hadn't|wish i'd|if only|too late|mistake*|my bad", -0.55, 0.4,
     "regret"),
    ("guilt*|my fault|ashamed|sorry|apolog*|feel bad", -0.5, 0.4, "guilt"),
    # loneliness
    ("lonely|loneliness|alone|isolated|no friends|nobody listens|nobody cares|no one listens|no one cares|"
     "nobody understands|miss you|miss him|miss her|miss them|miss my", -0.55, 0.3, "loneliness sadness"),
    # resignation
    ("oh well|it is what it is|nothing i can do|nothing we can do|can't be helped|no choice|what's the point",
     -0.4, 0.2, "resignation sadness"),
    ("give up|giving up|gave up|pointless|whatever", -0.4, 0.25, "resignation"),
    # nostalgia / surprise / confusion
    ("nostalgi*|good old days|back then|those days|memories|reminds me of", 0.35, 0.35, "nostalgia"),
    ("surpris*|wow|whoa|no way|unbelievable|can't believe|astonish*|unexpected*|omg|oh my god|shock*", 0.05, 0.85,
     "surprise"),
    ("confus*|don't understand|don't get it|doesn't make sense|puzzl*|baffl*|no idea|no clue|what do you mean|unsure|"
     "not sure|lost track", -0.3, 0.5, "confusion"),
    # everyday evaluative words (calm comfort, kindness, rudeness, luck, pain, shame)
    ("comfortable|comfy|cozy|cosy|relaxing|relaxed|soothing|peaceful|calm|pleasant|feel at home|at ease|"
     "convenient|handy", 0.55, 0.15, "satisfaction relief"),
    ("so kind|very kind|really kind|is kind|was kind|kindness|sweet|helpful|thoughtful|considerate", 0.6, 0.35, "gratitude"),
    ("excellent|perfect|brilliant|impressive|superb|cool|touching|so moved|deeply moved|favourite|favorite",
     0.7, 0.6, "joy"),
    ("lucky|fortunate|jackpot", 0.7, 0.7, "joy surprise"),
    ("had a baby|was born|got engaged|got married|getting married", 0.75, 0.7, "joy"),
    ("rude|so mean|was mean|is mean|being mean|mean to me|insulting|disrespectful|obnoxious|driving me crazy|drives me crazy|drove me crazy", -0.7, 0.75,
     "anger disgust"),
    ("noisy|useless|pointless waste", -0.5, 0.6, "frustration"),
    ("dangerous|unsafe|risky", -0.5, 0.75, "fear anxiety"),
    ("hurt|hurts|painful|pain|unfortunately|unlucky|poor thing|what a shame|such a shame", -0.6, 0.45, "sadness"),
    ("embarrass*|humiliat*|shame|shameful", -0.5, 0.6, "guilt"),
    ("jealous|envious|envy", -0.35, 0.55, ""),
    ("worse|poor|poorly", -0.4, 0.3, ""),
    # determination
    ("determined|determination|won't give up|never give up|not giving up|let's do this|i'll do it|no matter what|"
     "bring it on|motivat*|do my best|try my best|i will make it", 0.5, 0.75, "determination"),
)

# Words that sharpen or soften what follows; they change strength, not direction.
JA_INTENSIFIERS = ("すごく", "すっごく", "とても", "めちゃ", "めっちゃ", "本当に", "ほんとに", "ほんとうに", "超",
                   "マジで", "まじで", "死ぬほど", "心から", "非常に", "かなり", "絶対")
EN_INTENSIFIERS = ("very", "so", "really", "extremely", "super", "totally", "absolutely", "incredibly", "truly",
                   "deeply", "utterly", "so much", "insanely")
JA_HEDGES = ("ちょっと", "少し", "すこし", "まあ", "かな", "多少", "やや", "なんとなく", "微妙")
EN_HEDGES = ("a bit", "a little", "slightly", "somewhat", "kind of", "kinda", "sort of", "a tad", "i guess", "maybe")

# After one of these the speaker's real feeling usually follows, so later words weigh more.
JA_CONTRAST = ("けど", "けれど", "でも", "しかし", "だが", "のに")
EN_CONTRAST = ("but", "however", "though", "although")

# Category cues (F1 decay families). Regex fragments, compiled once in emotion_f2.
JA_DECISION = (r"決め(?:た|ました|ちゃった|よう)", r"ことにした", r"ことにします", r"ことにしました", r"ことに決め",
               r"(?<!未)決定", r"決断", r"決心", r"に決まった", r"で決まり", r"で行きます", r"でいきます", r"方針")
EN_DECISION = (r"decided", r"decide to", r"made (?:up )?(?:my|our|the|a) (?:mind|decision)", r"final decision",
               r"(?:we'll|i'll|let's|we will|i will) go with", r"going with", r"settled on", r"opted for",
               r"chose|chosen", r"we'll use|we will use", r"i'm going with")
JA_WORK = ("仕事", "会議", "ミーティング", "締め切り", "締切", "納期", "実装", "バグ", "デプロイ", "コード", "テスト", "レビュー",
           "資料", "上司", "同僚", "会社", "職場", "プロジェクト", "タスク", "作業", "設計", "残業", "プレゼン", "出張", "顧客",
           "取引先", "打ち合わせ", "報告書", "提出", "案件", "業務", "リリース", "サーバ", "データベース", "企画", "見積",
           "請求", "営業", "出社", "勤務", "給料", "転職", "面接", "研究", "論文", "宿題", "試験")
EN_WORK = ("work", "job", "meeting", "deadline", "bug", "bugs", "deploy*", "code", "coding", "test", "tests",
           "review", "project", "task", "tasks", "boss", "manager", "client", "customer", "report", "slides",
           "presentation", "sprint", "release", "pull request", "merge", "server", "database", "api", "office",
           "colleague", "coworker", "ticket", "implement*", "refactor*", "spec", "budget", "invoice", "quarterly",
           "interview", "salary", "overtime", "thesis", "homework", "exam")
# Personal topics: the notes' "emotional" family is "emotional core, personal topics".
JA_PERSONAL = ("家族", "母", "父", "ママ", "パパ", "お袋", "両親", "兄", "姉", "弟", "妹", "祖母", "祖父", "おばあちゃん",
               "おじいちゃん", "彼氏", "彼女", "恋人", "妻", "旦那", "嫁", "子供", "子ども", "息子", "娘", "友達",
               "親友", "結婚", "離婚", "別れ", "病気", "入院", "手術", "葬式", "亡くな", "妊娠", "出産", "愛犬", "愛猫",
               "ペット", "将来", "夢")
EN_PERSONAL = ("family", "mom", "mum", "dad", "mother", "father", "parents", "brother", "sister", "grandma",
               "grandpa", "grandmother", "grandfather", "boyfriend", "girlfriend", "partner", "husband", "wife",
               "kids", "son", "daughter", "friend", "friends", "best friend", "wedding", "married", "divorce",
               "broke up", "breakup", "sick", "hospital", "surgery", "funeral", "passed away", "cancer", "pregnant",
               "baby", "my dog", "my cat", "my pet", "my dream", "my future")
